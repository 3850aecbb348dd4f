#include "server/wire/websocket_frame.h"

#include <QCryptographicHash>

#include <array>
#include <cstddef>
#include <cstring>
#include <utility>

namespace rt::wire {

namespace {

// 2 bytes + 8-byte extended length + 4-byte mask key.
constexpr qsizetype MaxHeaderBytes = 14;
constexpr qsizetype MaxControlPayload = 125;
constexpr qsizetype MaxCloseReason = MaxControlPayload - 2;
// A frame that starts a message reserves min(length, max(bytes at hand, this)) up front: the
// common one-frame message gets one exact allocation, while a 14-byte header that merely claims
// 5 MB cannot make us allocate 5 MB per connection before the payload arrives.
constexpr qsizetype InitialReserveBytes = qsizetype(64) * 1024;

bool isKnownOpcode(quint8 opcode)
{
    switch (opcode) {
    case quint8(WsOpcode::Continuation):
    case quint8(WsOpcode::Text):
    case quint8(WsOpcode::Binary):
    case quint8(WsOpcode::Close):
    case quint8(WsOpcode::Ping):
    case quint8(WsOpcode::Pong):
        return true;
    default:
        return false;
    }
}

bool isControlOpcode(WsOpcode opcode)
{
    return (quint8(opcode) & 0x8) != 0;
}

// RFC 6455 §7.4: codes a peer may put on the wire. 1004 is reserved, 1005/1006/1015 are
// "MUST NOT be set", the rest of 0-2999 is unassigned or reserved for future protocol versions;
// 1012-1014 were registered with IANA later and are sent by real servers (we send 1012, 1013).
// 3000-4999 belong to libraries and applications; 5000+ is undefined.
bool isValidReceivedCloseCode(quint16 code)
{
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014)
            || (code >= 3000 && code <= 4999);
}

// XORs `size` bytes of `src` with the mask key into `dst`, where src[0] is payload byte number
// `payloadOffset` of its frame. The bulk goes 8 bytes at a time through memcpy'd words (the
// compiler turns this into plain loads/stores, and it has no alignment or aliasing issues).
void unmask(char *dst, const char *src, qsizetype size, const MaskKey &maskKey,
            quint64 payloadOffset)
{
    // rotated[i] is the key byte for payload byte payloadOffset + i.
    const quint64 r = payloadOffset & 3;
    const std::array<quint8, 8> rotated{ maskKey[r],           maskKey[(r + 1) & 3],
                                         maskKey[(r + 2) & 3], maskKey[(r + 3) & 3],
                                         maskKey[r],           maskKey[(r + 1) & 3],
                                         maskKey[(r + 2) & 3], maskKey[(r + 3) & 3] };
    quint64 key64;
    static_assert(sizeof key64 == sizeof rotated);
    std::memcpy(&key64, rotated.data(), sizeof key64);

    qsizetype i = 0;
    for (; i + 8 <= size; i += 8) {
        quint64 word;
        std::memcpy(&word, src + i, sizeof word);
        word ^= key64;
        std::memcpy(dst + i, &word, sizeof word);
    }
    for (; i < size; ++i) {
        dst[i] = char(quint8(src[i]) ^ rotated[std::size_t(i & 3)]);
    }
}

enum class HeaderStatus { NeedMore, Error, Complete };

struct HeaderResult
{
    HeaderStatus status = HeaderStatus::NeedMore;
    qsizetype headerBytes = 0;
    quint16 errorCode = 0;
    const char *errorReason = nullptr;
    WsOpcode opcode = WsOpcode::Continuation;
    bool fin = false;
    quint64 length = 0;
    MaskKey maskKey{};
};

HeaderResult headerError(quint16 code, const char *reason)
{
    HeaderResult r;
    r.status = HeaderStatus::Error;
    r.errorCode = code;
    r.errorReason = reason;
    return r;
}

// The checks that need only the first header byte (FIN, RSV1-3, opcode): the reason for the
// protocol error, or nullptr.
const char *finOpcodeByteError(quint8 byte, bool inFragmentedMessage)
{
    const bool fin = (byte & 0x80) != 0;
    if ((byte & 0x70) != 0) {
        return "reserved bits set (no extension negotiated)";
    }
    const quint8 rawOpcode = byte & 0x0F;
    if (!isKnownOpcode(rawOpcode)) {
        return "unknown opcode";
    }
    const auto opcode = WsOpcode(rawOpcode);
    if (isControlOpcode(opcode) && !fin) {
        return "fragmented control frame";
    }
    if (opcode == WsOpcode::Continuation && !inFragmentedMessage) {
        return "continuation frame without a message";
    }
    if ((opcode == WsOpcode::Text || opcode == WsOpcode::Binary) && inFragmentedMessage) {
        return "new message inside a fragmented message";
    }
    return nullptr;
}

// The checks that need only the second header byte (MASK, 7-bit length): the reason for the
// protocol error, or nullptr.
const char *maskLengthByteError(quint8 byte, WsOpcode opcode)
{
    if ((byte & 0x80) == 0) {
        return "client frame not masked";
    }
    const quint8 length7 = byte & 0x7F;
    if (isControlOpcode(opcode) && length7 > MaxControlPayload) {
        return "control frame payload over 125 bytes";
    }
    if (opcode == WsOpcode::Close && length7 == 1) {
        return "close frame with a 1-byte payload";
    }
    return nullptr;
}

// The payload length: the 7-bit field, or the big-endian extended length after it.
quint64 payloadLength(const quint8 *h, quint8 length7, qsizetype extendedBytes)
{
    if (extendedBytes == 0) {
        return length7;
    }
    quint64 length = 0;
    for (qsizetype i = 0; i < extendedBytes; ++i) {
        length = (length << 8) | h[2 + i];
    }
    return length;
}

// Payload bytes a data frame may still add to the message being reassembled.
quint64 messageRoom(qsizetype messageBytes, qsizetype maxMessageBytes)
{
    return maxMessageBytes > messageBytes ? quint64(maxMessageBytes - messageBytes) : 0;
}

HeaderResult completeHeader(const quint8 *h, qsizetype extendedBytes, WsOpcode opcode, bool fin,
                            quint64 length)
{
    HeaderResult r;
    r.status = HeaderStatus::Complete;
    r.headerBytes = 2 + extendedBytes + 4;
    r.opcode = opcode;
    r.fin = fin;
    r.length = length;
    std::memcpy(r.maskKey.data(), h + 2 + extendedBytes, r.maskKey.size());
    return r;
}

// Parses a frame header from the first `available` bytes of `h`. Every check runs as soon as the
// byte it needs is present and always in the same order, so the verdict (and the error reported)
// does not depend on how the input was split: the resumability oracle of the fuzzer relies on it.
HeaderResult parseHeader(const quint8 *h, qsizetype available, bool inFragmentedMessage,
                         qsizetype messageBytes, qsizetype maxMessageBytes)
{
    if (available < 1) {
        return {};
    }
    if (const char *reason = finOpcodeByteError(h[0], inFragmentedMessage)) {
        return headerError(ws_close::ProtocolError, reason);
    }
    const bool fin = (h[0] & 0x80) != 0;
    const auto opcode = WsOpcode(h[0] & 0x0F);

    if (available < 2) {
        return {};
    }
    if (const char *reason = maskLengthByteError(h[1], opcode)) {
        return headerError(ws_close::ProtocolError, reason);
    }
    const quint8 length7 = h[1] & 0x7F;

    // Non-minimal encodings (e.g. 126 + length 5) are accepted on purpose: RFC 6455 says "the
    // minimal number of bytes MUST be used" for senders, but rejecting costs interop and buys
    // nothing.
    const qsizetype extendedBytes = length7 == 126 ? 2 : (length7 == 127 ? 8 : 0);
    if (available < 2 + extendedBytes) {
        return {};
    }
    const quint64 length = payloadLength(h, length7, extendedBytes);
    if (extendedBytes == 8 && (length >> 63) != 0) {
        return headerError(ws_close::ProtocolError, "64-bit payload length with the high bit set");
    }
    // Fails before any payload byte is buffered (the limit is on the reassembled message).
    if (!isControlOpcode(opcode) && length > messageRoom(messageBytes, maxMessageBytes)) {
        return headerError(ws_close::MessageTooBig, "message too big");
    }

    if (available < 2 + extendedBytes + 4) {
        return {};
    }
    return completeHeader(h, extendedBytes, opcode, fin, length);
}

// Size of a server frame header for a payload of `size` bytes (minimal length encoding).
qsizetype serverHeaderBytes(qsizetype size)
{
    return size <= 125 ? 2 : (size <= 0xFFFF ? 4 : 10);
}

} // namespace

void WebSocketParser::feed(QByteArrayView data, Visitor &visitor)
{
    const char *p = data.data();
    qsizetype left = data.size();

    while (!m_failed && !m_closeReceived) {
        if (!m_inFramePayload) {
            if (left == 0) {
                return;
            }
            const bool fromInput = m_pending.isEmpty();
            qsizetype alreadyBuffered = 0;
            if (!fromInput) {
                // Top the partial header up to the longest possible header; bytes past its real
                // end are given back below (the buffer is dropped, the input pointer advances
                // only by what the header used).
                alreadyBuffered = m_pending.size();
                m_pending.append(p, qMin(MaxHeaderBytes - alreadyBuffered, left));
            }
            const auto *h = reinterpret_cast<const quint8 *>(fromInput ? p : m_pending.constData());
            const qsizetype available = fromInput ? left : m_pending.size();
            const HeaderResult header = parseHeader(h, available, m_inFragmentedMessage,
                                                    m_message.size(), m_limits.maxMessageBytes);
            if (header.status == HeaderStatus::Error) {
                fail(visitor, header.errorCode, header.errorReason);
                return;
            }
            if (header.status == HeaderStatus::NeedMore) {
                // Fewer than MaxHeaderBytes are at hand, so everything left is header bytes.
                if (fromInput) {
                    m_pending.append(p, left);
                }
                return;
            }
            const qsizetype used = header.headerBytes - alreadyBuffered;
            p += used;
            left -= used;
            m_pending.resize(0);
            beginFrame(header.opcode, header.fin, header.length, header.maskKey, left);
        }

        const qsizetype chunk = qMin(m_payloadRemaining, left);
        if (chunk > 0) {
            appendPayload(p, chunk);
            p += chunk;
            left -= chunk;
        }
        if (m_payloadRemaining > 0) {
            return; // input exhausted mid-payload
        }
        m_inFramePayload = false;
        finishFrame(visitor);
    }
}

void WebSocketParser::beginFrame(WsOpcode opcode, bool fin, quint64 length, const MaskKey &maskKey,
                                 qsizetype bytesAvailable)
{
    m_frameOpcode = opcode;
    m_frameFin = fin;
    // parseHeader guaranteed length <= 125 (control) or <= maxMessageBytes - m_message.size().
    m_payloadRemaining = qsizetype(length);
    m_payloadOffset = 0;
    m_maskKey = maskKey;
    m_inFramePayload = true;

    if (isControlOpcode(opcode)) {
        m_pending.reserve(m_payloadRemaining);
        return;
    }
    if (opcode != WsOpcode::Continuation) {
        m_messageOpcode = opcode;
        m_inFragmentedMessage = !fin;
    }
    if (m_message.isEmpty()) {
        // Continuation frames grow geometrically through QByteArray::resize instead: exact
        // reserves per fragment would make many small fragments quadratic.
        m_message.reserve(qMin(m_payloadRemaining, qMax(bytesAvailable, InitialReserveBytes)));
    }
}

void WebSocketParser::appendPayload(const char *data, qsizetype size)
{
    QByteArray &target = isControlOpcode(m_frameOpcode) ? m_pending : m_message;
    const qsizetype oldSize = target.size();
    target.resize(oldSize + size); // new bytes are left uninitialized; unmask writes all of them
    unmask(target.data() + oldSize, data, size, m_maskKey, m_payloadOffset);
    m_payloadOffset += quint64(size);
    m_payloadRemaining -= size;
}

void WebSocketParser::finishFrame(Visitor &visitor)
{
    switch (m_frameOpcode) {
    case WsOpcode::Continuation:
    case WsOpcode::Text:
    case WsOpcode::Binary:
        if (m_frameFin) {
            m_inFragmentedMessage = false;
            visitor.onMessage(m_messageOpcode, std::exchange(m_message, QByteArray()));
        } else {
            m_inFragmentedMessage = true;
        }
        return;
    case WsOpcode::Ping:
        visitor.onPing(std::exchange(m_pending, QByteArray()));
        return;
    case WsOpcode::Pong:
        visitor.onPong(std::exchange(m_pending, QByteArray()));
        return;
    case WsOpcode::Close: {
        QByteArray payload = std::exchange(m_pending, QByteArray());
        quint16 code = ws_close::NoStatus;
        if (!payload.isEmpty()) {
            // parseHeader rejected a 1-byte payload, so the code is complete.
            code = quint16((quint8(payload[0]) << 8) | quint8(payload[1]));
            if (!isValidReceivedCloseCode(code)) {
                fail(visitor, ws_close::ProtocolError, "invalid close code");
                return;
            }
            payload.remove(0, 2);
        }
        // A fragmented message cut short by the close is dropped, as is everything after it.
        m_closeReceived = true;
        m_message = QByteArray();
        m_inFragmentedMessage = false;
        visitor.onClose(code, std::move(payload));
        return;
    }
    }
}

void WebSocketParser::fail(Visitor &visitor, quint16 closeCode, const char *reason)
{
    m_failed = true;
    m_inFramePayload = false;
    m_pending = QByteArray();
    m_message = QByteArray();
    visitor.onProtocolError(closeCode, reason);
}

void appendFrame(QByteArray &out, WsOpcode opcode, QByteArrayView payload)
{
    Q_ASSERT(!isControlOpcode(opcode) || payload.size() <= MaxControlPayload);
    const qsizetype size = payload.size();
    const qsizetype headerBytes = serverHeaderBytes(size);
    const qsizetype oldSize = out.size();
    // One resize (geometric growth) instead of two appends: callers batch frames into `out`.
    out.resize(oldSize + headerBytes + size);
    auto *h = reinterpret_cast<quint8 *>(out.data() + oldSize);
    h[0] = quint8(0x80 | quint8(opcode));
    if (headerBytes == 2) {
        h[1] = quint8(size);
    } else if (headerBytes == 4) {
        h[1] = 126;
        h[2] = quint8(size >> 8);
        h[3] = quint8(size);
    } else {
        h[1] = 127;
        const auto length = quint64(size);
        for (int i = 0; i < 8; ++i) {
            h[2 + i] = quint8(length >> (56 - 8 * i));
        }
    }
    if (size > 0) {
        std::memcpy(h + headerBytes, payload.data(), size_t(size));
    }
}

QByteArray encodeFrame(WsOpcode opcode, QByteArrayView payload)
{
    QByteArray out;
    out.reserve(serverHeaderBytes(payload.size()) + payload.size());
    appendFrame(out, opcode, payload);
    return out;
}

QByteArray closePayload(quint16 code, QByteArrayView reason)
{
    qsizetype reasonBytes = reason.size();
    if (reasonBytes > MaxCloseReason) {
        reasonBytes = MaxCloseReason;
        // Step back over at most 3 continuation bytes so that a UTF-8 sequence is not split; for
        // input that is not UTF-8 anyway this still ends after 3 steps.
        for (int steps = 0;
             steps < 3 && reasonBytes > 0 && (quint8(reason[reasonBytes]) & 0xC0) == 0x80;
             ++steps) {
            --reasonBytes;
        }
    }
    QByteArray out;
    out.reserve(2 + reasonBytes);
    out.append(char(code >> 8));
    out.append(char(code & 0xFF));
    out.append(reason.first(reasonBytes));
    return out;
}

QByteArray websocketAcceptKey(QByteArrayView secWebSocketKey)
{
    QCryptographicHash sha1(QCryptographicHash::Sha1);
    sha1.addData(secWebSocketKey);
    sha1.addData(QByteArrayView("258EAFA5-E914-47DA-95CA-C5AB0DC85B11"));
    return sha1.result().toBase64();
}

} // namespace rt::wire
