#include "server/cluster/links/frame_codec.h"

#include <QtEndian>

namespace rt::cluster::links {

QByteArray encodeFrameHeader(quint8 kind, quint32 payloadBytes)
{
    QByteArray header(FrameHeaderBytes, Qt::Uninitialized);
    qToBigEndian<quint32>(payloadBytes, header.data());
    header[4] = static_cast<char>(kind);
    return header;
}

QByteArray encodeFrame(quint8 kind, QByteArrayView payload)
{
    QByteArray frame;
    frame.reserve(FrameHeaderBytes + payload.size());
    frame.append(encodeFrameHeader(kind, static_cast<quint32>(payload.size())));
    frame.append(payload);
    return frame;
}

FrameDecoder::FrameDecoder(quint32 maxPayloadBytes) : m_maxPayloadBytes(maxPayloadBytes) { }

void FrameDecoder::feed(QByteArrayView bytes)
{
    if (m_error || bytes.isEmpty()) {
        return;
    }
    compact();
    m_buffer.append(bytes);
}

std::optional<Frame> FrameDecoder::next()
{
    if (m_error) {
        return std::nullopt;
    }
    const qsizetype available = m_buffer.size() - m_offset;
    if (available < FrameHeaderBytes) {
        return std::nullopt;
    }
    const char *header = m_buffer.constData() + m_offset;
    const auto payloadBytes = qFromBigEndian<quint32>(header);
    const auto kind = static_cast<quint8>(header[4]);
    // The header is judged as soon as it is complete, before any payload is buffered, so an
    // absurd length never makes us wait for (or hold) gigabytes.
    if (kind == 0) {
        m_error = FrameError{
            FrameErrorCode::InvalidKind,
            QStringLiteral("frame kind 0 (announced length %1)").arg(payloadBytes)
        };
        m_buffer.clear();
        m_offset = 0;
        return std::nullopt;
    }
    if (payloadBytes > m_maxPayloadBytes) {
        m_error = FrameError{ FrameErrorCode::TooLarge,
                              QStringLiteral("frame of kind %1 announces %2 bytes, limit %3")
                                      .arg(kind)
                                      .arg(payloadBytes)
                                      .arg(m_maxPayloadBytes) };
        m_buffer.clear();
        m_offset = 0;
        return std::nullopt;
    }
    if (available - FrameHeaderBytes < static_cast<qsizetype>(payloadBytes)) {
        return std::nullopt;
    }
    Frame frame;
    frame.kind = kind;
    frame.payload = m_buffer.mid(m_offset + FrameHeaderBytes, payloadBytes);
    m_offset += FrameHeaderBytes + payloadBytes;
    if (m_offset == m_buffer.size()) {
        m_buffer.clear();
        m_offset = 0;
    }
    return frame;
}

void FrameDecoder::compact()
{
    // Drop consumed bytes once they are at least half the buffer: amortised O(1) per byte.
    if (m_offset > 0 && m_offset * 2 >= m_buffer.size()) {
        m_buffer.remove(0, m_offset);
        m_offset = 0;
    }
}

} // namespace rt::cluster::links
