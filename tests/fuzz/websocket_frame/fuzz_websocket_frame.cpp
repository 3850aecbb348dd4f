// Fuzzes WebSocketParser with a resumability oracle: the events must be identical whether the
// stream is fed whole, split in two at a data-derived offset, or byte by byte. Also checks the
// parser's memory bound and that every decoded payload survives encodeFrame -> mask -> parse.
//
// Input layout: byte 0 selects the limits, bytes 1-2 the split offset, the rest is the stream
// of client frames.
#include "server/wire/websocket_frame.h"

#include <QByteArrayList>
#include <QList>
#include <QStringBuilder>

#include <cstdint>
#include <cstdlib>

using rt::wire::WebSocketParser;
using rt::wire::WsOpcode;

namespace {

// Each event flattened to bytes: a tag, then the code (if any), then the payload.
class Recorder : public WebSocketParser::Visitor
{
public:
    explicit Recorder(const WebSocketParser::Limits &limits) : m_limits(limits) { }

    QByteArrayList events;

    void onMessage(WsOpcode opcode, QByteArray message) override
    {
        if (message.size() > m_limits.maxMessageBytes
            || (opcode != WsOpcode::Text && opcode != WsOpcode::Binary)) {
            std::abort();
        }
        events.append((opcode == WsOpcode::Text ? "T" : "B") + message);
    }
    void onPing(QByteArray payload) override { control('P', payload); }
    void onPong(QByteArray payload) override { control('O', payload); }
    void onClose(quint16 code, QByteArray reason) override
    {
        if (reason.size() > 123) {
            std::abort();
        }
        events.append('C' + QByteArray::number(code) + ':' + reason);
    }
    void onProtocolError(quint16 closeCode, const char *reason) override
    {
        if (closeCode != 1002 && closeCode != 1009) {
            std::abort();
        }
        events.append('E' + QByteArray::number(closeCode) + ':' + reason);
    }

private:
    void control(char tag, const QByteArray &payload)
    {
        if (payload.size() > 125) {
            std::abort();
        }
        events.append(tag + payload);
    }

    WebSocketParser::Limits m_limits;
};

QByteArrayList run(const WebSocketParser::Limits &limits, const QList<QByteArrayView> &chunks)
{
    WebSocketParser parser(limits);
    Recorder recorder(limits);
    for (const QByteArrayView chunk : chunks) {
        parser.feed(chunk, recorder);
        // Held bytes: at most a whole message plus a partial header or control payload.
        if (parser.bufferedBytes() > limits.maxMessageBytes + 125) {
            std::abort();
        }
        if (parser.failed() && parser.bufferedBytes() != 0) {
            std::abort();
        }
    }
    const bool endsWithError = !recorder.events.isEmpty() && recorder.events.last().startsWith('E');
    if (parser.failed() != endsWithError) {
        std::abort();
    }
    return recorder.events;
}

// Server frame -> client frame with a fixed mask key.
QByteArray masked(const QByteArray &serverFrame)
{
    static const char key[4] = { '\x5a', '\x01', '\xc3', '\x7e' };
    const quint8 length7 = quint8(serverFrame[1]) & 0x7F;
    const qsizetype headerBytes = length7 == 126 ? 4 : (length7 == 127 ? 10 : 2);
    QByteArray out = serverFrame.first(headerBytes);
    out[1] = char(quint8(out[1]) | 0x80);
    out.append(key, 4);
    for (qsizetype i = headerBytes; i < serverFrame.size(); ++i) {
        out.append(char(serverFrame[i] ^ key[(i - headerBytes) % 4]));
    }
    return out;
}

void checkRoundTrip(const QByteArray &event)
{
    WsOpcode opcode;
    switch (event[0]) {
    case 'T':
        opcode = WsOpcode::Text;
        break;
    case 'B':
        opcode = WsOpcode::Binary;
        break;
    case 'P':
        opcode = WsOpcode::Ping;
        break;
    case 'O':
        opcode = WsOpcode::Pong;
        break;
    default:
        return;
    }
    const QByteArray frame = masked(rt::wire::encodeFrame(opcode, QByteArrayView(event).sliced(1)));
    const QByteArrayList again = run({}, { frame });
    if (again.size() != 1 || again.first() != event) {
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) {
        return 0;
    }
    WebSocketParser::Limits limits;
    // Odd selectors keep the production limit; even ones pick a small one (0..508 bytes) so that
    // 1009 and the limit arithmetic are reached with small inputs.
    if ((data[0] & 1) == 0) {
        limits.maxMessageBytes = (data[0] >> 1) * 4;
    }
    const QByteArrayView stream(reinterpret_cast<const char *>(data) + 3, qsizetype(size - 3));
    const qsizetype split = qsizetype((size_t(data[1]) << 8) | data[2]) % (stream.size() + 1);

    const QByteArrayList whole = run(limits, { stream });
    if (run(limits, { stream.first(split), stream.sliced(split) }) != whole) {
        std::abort();
    }
    if (stream.size() <= 4096) {
        QList<QByteArrayView> bytes;
        for (qsizetype i = 0; i < stream.size(); ++i) {
            bytes.append(stream.sliced(i, 1));
        }
        if (run(limits, bytes) != whole) {
            std::abort();
        }
    }
    for (const QByteArray &event : whole) {
        checkRoundTrip(event);
    }

    // closePayload: bounded, code first, reason a prefix of the input.
    const QByteArray close = rt::wire::closePayload(quint16(split), stream);
    if (close.size() > 125 || close.size() < 2 || quint8(close[0]) != quint8(split >> 8)
        || !stream.startsWith(QByteArrayView(close).sliced(2))) {
        std::abort();
    }
    return 0;
}
