#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <optional>

namespace rt::cluster::links {

// Wire format of a node link: a sequence of frames, each
//
//   u32 payload length (big-endian) | u8 kind | payload
//
// Kinds 1..15 belong to the link itself (handshake, heartbeat, rejection); 16..255 carry the
// cluster's traffic (broadcasts, presence, remote calls...), chosen by the link's users. Kind 0
// is never valid, so a stream of zero bytes is rejected at once. Frames never exceed the
// receiver's maximum payload size; a sender must not send bigger ones (NodeLinks refuses them).

enum class ControlKind : quint8 {
    Hello = 1, // handshake: magic, version, nonce, node id (see handshake.h)
    Proof = 2, // handshake: HMAC-SHA256 proof of the cluster secret
    Reject = 3, // the sender is closing; payload is a short UTF-8 reason
    Ping = 4, // heartbeat; empty payload
};

constexpr quint8 FirstApplicationKind = 16;
constexpr qsizetype FrameHeaderBytes = 5;
constexpr quint32 DefaultMaxFramePayloadBytes = 16U * 1024U * 1024U;
// Until a link has passed its handshake, only Hello and Proof may arrive: a peer that has not
// proved the cluster secret cannot make a node buffer more than this per frame.
constexpr quint32 PreAuthMaxFramePayloadBytes = 4U * 1024U;

inline bool isControlKind(quint8 kind)
{
    return kind >= 1 && kind < FirstApplicationKind;
}

struct Frame
{
    quint8 kind = 0;
    QByteArray payload;
};

enum class FrameErrorCode {
    InvalidKind, // kind 0 (not a link stream, or corrupted)
    TooLarge, // the announced payload exceeds the receiver's limit
};

struct FrameError
{
    FrameErrorCode code;
    QString message; // for logs: what was seen and what the limit is
};

// The 5 header bytes of a frame with `payloadBytes` of payload.
QByteArray encodeFrameHeader(quint8 kind, quint32 payloadBytes);

// A whole frame (header + payload). The caller keeps payloads within the peer's limit and
// below 4 GiB.
QByteArray encodeFrame(quint8 kind, QByteArrayView payload);

// Resumable decoder: bytes may be fed split anywhere (one byte at a time, or many frames at
// once); complete frames come out in order. The first malformed header stops the decoder for
// good (the stream cannot be resynchronised); error() then says why and further input is
// ignored. Memory held is at most one frame plus whatever the caller fed beyond it.
// A value type, used by one thread at a time.
class FrameDecoder
{
public:
    explicit FrameDecoder(quint32 maxPayloadBytes = DefaultMaxFramePayloadBytes);

    void feed(QByteArrayView bytes);
    // The next complete frame; nullopt when more bytes are needed or the stream is broken.
    std::optional<Frame> next();

    bool hasError() const { return m_error.has_value(); }
    const std::optional<FrameError> &error() const { return m_error; }
    // Bytes received but not yet returned as frames.
    qsizetype bufferedBytes() const { return m_buffer.size() - m_offset; }
    quint32 maxPayloadBytes() const { return m_maxPayloadBytes; }
    // Changes the limit for frames whose header has not been judged yet (the handshake's small
    // limit is raised once the peer is authenticated).
    void setMaxPayloadBytes(quint32 maxPayloadBytes) { m_maxPayloadBytes = maxPayloadBytes; }

private:
    void compact();

    quint32 m_maxPayloadBytes;
    QByteArray m_buffer;
    qsizetype m_offset = 0; // start of the first unconsumed byte in m_buffer
    std::optional<FrameError> m_error;
};

} // namespace rt::cluster::links
