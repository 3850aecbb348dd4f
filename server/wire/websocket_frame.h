#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <array>

// RFC 6455 framing, server side: a pure, resumable parser for client frames and encoders for
// server frames. No sockets here; the connection feeds bytes in and writes bytes out.
namespace rt::wire {

// The 4-byte masking key of a client frame (RFC 6455 §5.3).
using MaskKey = std::array<quint8, 4>;

enum class WsOpcode : quint8 {
    Continuation = 0x0,
    Text = 0x1,
    Binary = 0x2,
    Close = 0x8,
    Ping = 0x9,
    Pong = 0xA,
};

// Close codes the server sends (RFC 6455 §7.4.1).
namespace ws_close {
constexpr quint16 Normal = 1000;
constexpr quint16 GoingAway = 1001;
constexpr quint16 ProtocolError = 1002;
constexpr quint16 NoStatus = 1005; // reported when a close frame has no code; never sent
constexpr quint16 PolicyViolation = 1008;
constexpr quint16 MessageTooBig = 1009;
constexpr quint16 InternalError = 1011;
constexpr quint16 ServiceRestart = 1012;
constexpr quint16 TryAgainLater = 1013;
} // namespace ws_close

// Parses client->server frames. Client frames must be masked. Fragmented messages are
// reassembled; control frames may interleave with fragments. Text payloads are not UTF-8
// validated here (Supabase Realtime disables that check; the Phoenix decoder validates JSON).
// Once a protocol error was reported the parser ignores all further input.
class WebSocketParser
{
public:
    struct Limits
    {
        qsizetype maxMessageBytes = 5'000'000; // whole reassembled message
    };

    class Visitor
    {
    public:
        virtual ~Visitor() = default;
        // A complete data message; opcode is Text or Binary.
        virtual void onMessage(WsOpcode opcode, QByteArray message) = 0;
        virtual void onPing(QByteArray payload) = 0;
        virtual void onPong(QByteArray payload) = 0;
        // code is ws_close::NoStatus when the close frame carried no code.
        virtual void onClose(quint16 code, QByteArray reason) = 0;
        // The peer violated the protocol; the connection should be closed with closeCode
        // (ProtocolError or MessageTooBig). reason is a short English explanation.
        virtual void onProtocolError(quint16 closeCode, const char *reason) = 0;
    };

    // Two constructors instead of `Limits limits = {}`: a nested struct with default member
    // initializers cannot be a default argument inside its enclosing class (CWG 1397).
    WebSocketParser() : WebSocketParser(Limits()) { }
    explicit WebSocketParser(Limits limits) : m_limits(limits) { }

    // Consumes all of `data`, calling the visitor for each complete event in order.
    void feed(QByteArrayView data, Visitor &visitor);

    bool failed() const { return m_failed; }
    // True once a valid close frame was delivered; all later input is ignored (RFC 6455 §5.5.1:
    // nothing may follow a close frame).
    bool closeReceived() const { return m_closeReceived; }
    // Bytes held for an incomplete frame or message (for memory accounting and tests).
    qsizetype bufferedBytes() const { return m_pending.size() + m_message.size(); }

private:
    Limits m_limits;
    QByteArray m_pending; // bytes of a frame whose header or payload is incomplete
    QByteArray m_message; // fragments of a data message being reassembled
    WsOpcode m_messageOpcode = WsOpcode::Text;
    bool m_inFragmentedMessage = false;
    bool m_failed = false;

    // Frame whose header was parsed and whose payload is still arriving. Data payloads are
    // unmasked straight into m_message, control payloads (<= 125 bytes) into m_pending; while
    // m_inFramePayload is false, m_pending holds the 1..13 bytes of a partial header, if any.
    void beginFrame(WsOpcode opcode, bool fin, quint64 length, const MaskKey &maskKey,
                    qsizetype bytesAvailable);
    void appendPayload(const char *data, qsizetype size);
    void finishFrame(Visitor &visitor);
    void fail(Visitor &visitor, quint16 closeCode, const char *reason);

    qsizetype m_payloadRemaining = 0; // bounded by maxMessageBytes (data) or 125 (control)
    quint64 m_payloadOffset = 0; // payload bytes already unmasked: picks the mask key rotation
    MaskKey m_maskKey{};
    WsOpcode m_frameOpcode = WsOpcode::Text;
    bool m_frameFin = false;
    bool m_inFramePayload = false;
    bool m_closeReceived = false;
};

// Appends one complete unmasked server frame (FIN set) to `out`.
void appendFrame(QByteArray &out, WsOpcode opcode, QByteArrayView payload);
// One complete unmasked server frame.
QByteArray encodeFrame(WsOpcode opcode, QByteArrayView payload);
// A close frame payload: 2-byte code + UTF-8 reason (reason truncated to fit 123 bytes).
QByteArray closePayload(quint16 code, QByteArrayView reason);

// Sec-WebSocket-Accept for a Sec-WebSocket-Key (RFC 6455 §4.2.2).
QByteArray websocketAcceptKey(QByteArrayView secWebSocketKey);

} // namespace rt::wire
