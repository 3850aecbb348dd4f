#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QtEndian>

#include <optional>

// Big-endian field helpers shared by the cluster frame codecs (envelopes, interest frames).
// Internal to server/pubsub: not part of the module's API.
namespace rt::pubsub::detail {

class ByteWriter
{
public:
    explicit ByteWriter(qsizetype reserve = 0) { m_bytes.reserve(reserve); }

    void u8(quint8 value) { m_bytes.append(static_cast<char>(value)); }
    void u32(quint32 value)
    {
        char buffer[4];
        qToBigEndian(value, buffer);
        m_bytes.append(buffer, 4);
    }
    void u64(quint64 value)
    {
        char buffer[8];
        qToBigEndian(value, buffer);
        m_bytes.append(buffer, 8);
    }
    // u32 length + bytes.
    void bytes(QByteArrayView value)
    {
        u32(static_cast<quint32>(value.size()));
        m_bytes.append(value.data(), value.size());
    }

    QByteArray take() { return std::move(m_bytes); }

private:
    QByteArray m_bytes;
};

// Reads fields off untrusted bytes. Every read checks the remaining length first; a read past
// the end yields nullopt and leaves the reader failed, never touches memory it does not own.
class ByteReader
{
public:
    explicit ByteReader(QByteArrayView bytes) : m_bytes(bytes) { }

    std::optional<quint8> u8()
    {
        if (remaining() < 1) {
            return std::nullopt;
        }
        return static_cast<quint8>(m_bytes[m_offset++]);
    }
    std::optional<quint32> u32()
    {
        if (remaining() < 4) {
            return std::nullopt;
        }
        const quint32 value = qFromBigEndian<quint32>(m_bytes.data() + m_offset);
        m_offset += 4;
        return value;
    }
    std::optional<quint64> u64()
    {
        if (remaining() < 8) {
            return std::nullopt;
        }
        const quint64 value = qFromBigEndian<quint64>(m_bytes.data() + m_offset);
        m_offset += 8;
        return value;
    }
    // u32 length + bytes; the length must fit in what remains (so a hostile length never
    // makes us allocate more than the frame holds).
    std::optional<QByteArray> bytes()
    {
        const std::optional<quint32> length = u32();
        if (!length || *length > static_cast<quint64>(remaining())) {
            m_offset = m_bytes.size();
            return std::nullopt;
        }
        QByteArray value(m_bytes.data() + m_offset, static_cast<qsizetype>(*length));
        m_offset += static_cast<qsizetype>(*length);
        return value;
    }

    qsizetype remaining() const { return m_bytes.size() - m_offset; }
    bool atEnd() const { return remaining() == 0; }

private:
    QByteArrayView m_bytes;
    qsizetype m_offset = 0;
};

} // namespace rt::pubsub::detail
