#include "shared/protocol/phoenix_codec.h"

#include "shared/protocol/json_scan.h"

#include <array>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>

namespace rt::protocol {

namespace {

using Byte = unsigned char;

// ---- vsn negotiation ---------------------------------------------------------------------------
//
// Phoenix parses `vsn` with Elixir's Version.parse/1 and picks the first serializer whose
// requirement matches with Version.match?/2 (default allow_pre: true); the endpoint lists
// "~> 1.0.0" then "~> 2.0.0". "~> X.0.0" means ">= X.0.0 and < X.1.0-0". Consequences, which
// parseVsn reproduces without a general SemVer implementation:
//  * the text must be MAJOR.MINOR.PATCH[-PRE][+BUILD]; numbers are ASCII digits without leading
//    zeros; PRE and BUILD are non-empty dot-separated [0-9A-Za-z-] identifiers, and purely
//    numeric PRE identifiers may not have leading zeros either;
//  * MAJOR must be 1 or 2 and MINOR 0; PATCH is any number (BUILD is ignored);
//  * a pre-release sorts *before* its release, so "2.0.0-rc1" is below the lower bound and is
//    rejected, while "2.0.1-rc1" lies inside [2.0.0, 2.1.0-0) and selects V2.

bool isAsciiDigit(char c)
{
    return c >= '0' && c <= '9';
}

bool isAllDigits(QByteArrayView part)
{
    if (part.isEmpty()) {
        return false;
    }
    for (const char c : part) {
        if (!isAsciiDigit(c)) {
            return false;
        }
    }
    return true;
}

// Elixir's require_digits/1.
bool isVersionNumber(QByteArrayView part)
{
    return isAllDigits(part) && !(part.size() > 1 && part.front() == '0');
}

bool isIdentifierChar(char c)
{
    return isAsciiDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

// Elixir's optional_dot_separated/1 (+ convert_parts_to_integer/2 for pre-release parts).
bool isIdentifierList(QByteArrayView list, bool isPreRelease)
{
    qsizetype start = 0;
    for (;;) {
        qsizetype stop = list.indexOf('.', start);
        if (stop < 0) {
            stop = list.size();
        }
        const QByteArrayView part = list.sliced(start, stop - start);
        if (part.isEmpty()) {
            return false;
        }
        for (const char c : part) {
            if (!isIdentifierChar(c)) {
                return false;
            }
        }
        if (isPreRelease && isAllDigits(part) && !isVersionNumber(part)) {
            return false;
        }
        if (stop == list.size()) {
            return true;
        }
        start = stop + 1;
    }
}

// ---- decoding helpers --------------------------------------------------------------------------
//
// Errors carry QStringLiteral messages (static data), so dropping a malformed frame allocates
// nothing.

bool isScalar(const json::Span &span)
{
    return span.kind != json::Kind::Object && span.kind != json::Kind::Array;
}

QByteArrayView spanText(QByteArrayView text, const json::Span &span)
{
    return text.sliced(span.begin, span.end - span.begin);
}

QByteArray spanBytes(QByteArrayView text, const json::Span &span)
{
    return spanText(text, span).toByteArray();
}

enum class V1Field : quint8 { Topic, Event, Payload, Ref, JoinRef, Other };

V1Field classifyDecodedKey(QByteArrayView key)
{
    if (key == QByteArrayView("topic")) {
        return V1Field::Topic;
    }
    if (key == QByteArrayView("event")) {
        return V1Field::Event;
    }
    if (key == QByteArrayView("payload")) {
        return V1Field::Payload;
    }
    if (key == QByteArrayView("ref")) {
        return V1Field::Ref;
    }
    if (key == QByteArrayView("join_ref")) {
        return V1Field::JoinRef;
    }
    return V1Field::Other;
}

// `literal` is a validated key literal, quotes included. Keys written with escapes
// ("\u0074opic") mean the same as plain ones to a JSON decoder, so they are decoded (rare path).
V1Field classifyKey(QByteArrayView literal)
{
    const QByteArrayView body = literal.sliced(1, literal.size() - 2);
    if (!body.contains('\\')) {
        return classifyDecodedKey(body);
    }
    QByteArray decoded;
    if (!json::decodeString(literal, decoded)) {
        return V1Field::Other;
    }
    return classifyDecodedKey(decoded);
}

// The topic and event names realtime-js puts on nearly every frame. Returning them as static
// literals saves an allocation per decoded frame (QByteArray has no small-string buffer).
std::optional<QByteArray> knownName(QByteArrayView name)
{
    switch (name.size()) {
    case 7:
        if (name == QByteArrayView("phoenix")) {
            return QByteArrayLiteral("phoenix");
        }
        break;
    case 8:
        if (name == QByteArrayView("phx_join")) {
            return QByteArrayLiteral("phx_join");
        }
        if (name == QByteArrayView("presence")) {
            return QByteArrayLiteral("presence");
        }
        break;
    case 9:
        if (name == QByteArrayView("broadcast")) {
            return QByteArrayLiteral("broadcast");
        }
        if (name == QByteArrayView("heartbeat")) {
            return QByteArrayLiteral("heartbeat");
        }
        if (name == QByteArrayView("phx_leave")) {
            return QByteArrayLiteral("phx_leave");
        }
        break;
    case 12:
        if (name == QByteArrayView("access_token")) {
            return QByteArrayLiteral("access_token");
        }
        break;
    case 16:
        if (name == QByteArrayView("postgres_changes")) {
            return QByteArrayLiteral("postgres_changes");
        }
        break;
    default:
        break;
    }
    return std::nullopt;
}

// `literal` is a validated JSON string literal, quotes included.
bool decodeName(QByteArrayView literal, QByteArray &out)
{
    // A body that is byte-for-byte a known (escape-free, ASCII) name decodes to that name.
    if (std::optional<QByteArray> known = knownName(literal.sliced(1, literal.size() - 2))) {
        out = std::move(*known);
        return true;
    }
    return json::decodeString(literal, out);
}

// A raw JSON token for a ref; `null` (the default value) is kept as static data.
void assignRef(QByteArray &ref, QByteArrayView token)
{
    if (token != QByteArrayView("null")) {
        ref = token.toByteArray();
    }
}

// joinRef is null when a V1 frame has no join_ref key.
Result<InboundMessage> messageFromSpans(QByteArrayView frame, const json::Span *joinRef,
                                        const json::Span &ref, const json::Span &topic,
                                        const json::Span &event, const json::Span &payload)
{
    if ((joinRef && !isScalar(*joinRef)) || !isScalar(ref)) {
        return Error{ QStringLiteral("join_ref and ref must be JSON scalars") };
    }
    if (topic.kind != json::Kind::String) {
        return Error{ QStringLiteral("topic must be a string") };
    }
    if (event.kind != json::Kind::String) {
        return Error{ QStringLiteral("event must be a string") };
    }

    InboundMessage message;
    if (joinRef) {
        assignRef(message.joinRef, spanText(frame, *joinRef));
    }
    assignRef(message.ref, spanText(frame, ref));
    // The literals were validated by the split, so decoding cannot fail; checked anyway.
    if (!decodeName(spanText(frame, topic), message.topic)
        || !decodeName(spanText(frame, event), message.event)) {
        return Error{ QStringLiteral("invalid topic or event string") };
    }
    message.payload = spanBytes(frame, payload);
    return message;
}

Result<InboundMessage> decodeV2Text(QByteArrayView frame)
{
    std::array<json::Span, 5> spans;
    qsizetype count = 0;
    if (!json::splitArray(frame, spans.data(), spans.size(), count)) {
        // Error path only: a second pass tells the two failure causes apart for the log.
        return json::isValid(frame) ? Error{ QStringLiteral("V2 text frame is not a JSON array") }
                                    : Error{ QStringLiteral("V2 text frame is not valid JSON") };
    }
    if (count < 5) {
        return Error{ QStringLiteral("V2 text frame has fewer than 5 elements") };
    }
    return messageFromSpans(frame, &spans[0], spans[1], spans[2], spans[3], spans[4]);
}

Result<InboundMessage> decodeV1Text(QByteArrayView frame)
{
    // realtime-js sends four or five keys; a larger object falls back to a heap list.
    constexpr qsizetype InlineMembers = 8;
    std::array<json::Member, InlineMembers> inlineMembers;
    qsizetype count = 0;
    if (!json::splitObject(frame, inlineMembers.data(), InlineMembers, count)) {
        return json::isValid(frame) ? Error{ QStringLiteral("V1 text frame is not a JSON object") }
                                    : Error{ QStringLiteral("V1 text frame is not valid JSON") };
    }
    QList<json::Member> heapMembers;
    const json::Member *members = inlineMembers.data();
    if (count > InlineMembers) {
        if (!json::splitObject(frame, heapMembers)) {
            return Error{ QStringLiteral("V1 text frame is not valid JSON") };
        }
        members = heapMembers.constData();
    }

    // Duplicate keys: the last one wins, as with Jason (Phoenix's JSON library).
    std::array<const json::Span *, 5> fields{};
    for (qsizetype i = 0; i < count; ++i) {
        const V1Field field = classifyKey(spanText(frame, members[i].key));
        if (field != V1Field::Other) {
            fields[static_cast<size_t>(field)] = &members[i].value;
        }
    }
    const json::Span *topic = fields[static_cast<size_t>(V1Field::Topic)];
    const json::Span *event = fields[static_cast<size_t>(V1Field::Event)];
    const json::Span *payload = fields[static_cast<size_t>(V1Field::Payload)];
    const json::Span *ref = fields[static_cast<size_t>(V1Field::Ref)];
    const json::Span *joinRef = fields[static_cast<size_t>(V1Field::JoinRef)];
    if (!topic || !event || !payload || !ref) {
        return Error{ QStringLiteral("V1 text frame lacks one of topic, event, payload, ref") };
    }
    return messageFromSpans(frame, joinRef, *ref, *topic, *event, *payload);
}

// Reads the consecutive length-prefixed header strings of a binary frame. Every length is
// checked against what is left before anything is read.
class BinaryReader
{
public:
    explicit BinaryReader(QByteArrayView frame) : m_frame(frame) { }

    bool take(qsizetype length, QByteArrayView &field)
    {
        if (length > m_frame.size() - m_offset) {
            return false;
        }
        field = m_frame.sliced(m_offset, length);
        m_offset += length;
        return true;
    }
    QByteArrayView rest() const { return m_frame.sliced(m_offset); }

private:
    QByteArrayView m_frame;
    qsizetype m_offset = 0;
};

Byte byteAt(QByteArrayView frame, qsizetype index)
{
    return static_cast<Byte>(frame[index]);
}

// Binary header strings are echoed later inside text frames (ack replies carry topic and refs);
// invalid UTF-8 there would make a Node `ws` client close the connection, so it is refused here.
bool areValidUtf8(std::initializer_list<QByteArrayView> fields)
{
    for (const QByteArrayView field : fields) {
        if (!json::isValidUtf8(field)) {
            return false;
        }
    }
    return true;
}

Result<InboundMessage> decodeUserBroadcastPush(QByteArrayView frame)
{
    // kind, join_ref_len, ref_len, topic_len, user_event_len, metadata_len, encoding
    constexpr qsizetype HeaderSize = 7;
    if (frame.size() < HeaderSize) {
        return Error{ QStringLiteral("binary kind 3 frame shorter than its header") };
    }
    BinaryReader reader(frame);
    QByteArrayView header;
    QByteArrayView joinRef, ref, topic, userEvent, metadata;
    if (!reader.take(HeaderSize, header) || !reader.take(byteAt(frame, 1), joinRef)
        || !reader.take(byteAt(frame, 2), ref) || !reader.take(byteAt(frame, 3), topic)
        || !reader.take(byteAt(frame, 4), userEvent) || !reader.take(byteAt(frame, 5), metadata)) {
        return Error{ QStringLiteral("binary kind 3 field lengths run past the end of the frame") };
    }
    if (!areValidUtf8({ joinRef, ref, topic, userEvent })) {
        return Error{ QStringLiteral("binary kind 3 header string is not valid UTF-8") };
    }
    // Upstream decodes non-empty metadata with Jason.decode! and drops the frame if that fails.
    if (!metadata.isEmpty() && !json::isValid(metadata)) {
        return Error{ QStringLiteral("binary kind 3 metadata is not valid JSON") };
    }
    // Upstream: encoding 0 is raw binary, every other value means JSON.
    const bool payloadIsJson = byteAt(frame, 6) != 0;
    const QByteArrayView payload = reader.rest();
    if (payloadIsJson && !json::isValid(payload)) {
        return Error{ QStringLiteral("binary kind 3 JSON payload is not valid JSON") };
    }

    InboundMessage message;
    message.joinRef = jsonString(joinRef);
    message.ref = jsonString(ref);
    message.topic = topic.toByteArray();
    message.event = QByteArrayLiteral("broadcast");
    message.payload = payload.toByteArray();
    message.isUserBroadcast = true;
    message.userEvent = userEvent.toByteArray();
    message.metadata = metadata.toByteArray();
    message.payloadIsJson = payloadIsJson;
    return message;
}

Result<InboundMessage> decodeBinaryPush(QByteArrayView frame)
{
    // kind, join_ref_len, ref_len, topic_len, event_len
    constexpr qsizetype HeaderSize = 5;
    if (frame.size() < HeaderSize) {
        return Error{ QStringLiteral("binary kind 0 frame shorter than its header") };
    }
    BinaryReader reader(frame);
    QByteArrayView header;
    QByteArrayView joinRef, ref, topic, event;
    if (!reader.take(HeaderSize, header) || !reader.take(byteAt(frame, 1), joinRef)
        || !reader.take(byteAt(frame, 2), ref) || !reader.take(byteAt(frame, 3), topic)
        || !reader.take(byteAt(frame, 4), event)) {
        return Error{ QStringLiteral("binary kind 0 field lengths run past the end of the frame") };
    }
    if (!areValidUtf8({ joinRef, ref, topic, event })) {
        return Error{ QStringLiteral("binary kind 0 header string is not valid UTF-8") };
    }

    InboundMessage message;
    message.joinRef = jsonString(joinRef);
    message.ref = jsonString(ref);
    message.topic = topic.toByteArray();
    message.event = event.toByteArray();
    message.payload = reader.rest().toByteArray();
    message.isUserBroadcast = false;
    message.payloadIsJson = false;
    return message;
}

// ---- encoding helpers --------------------------------------------------------------------------

// Extra bytes each byte needs when escaped in a JSON string: 1 for the two-character escapes,
// 5 for \u00XX, 0 for everything else (including '/' and all non-ASCII bytes).
constexpr std::array<quint8, 256> makeEscapeExtraTable()
{
    std::array<quint8, 256> table{};
    for (int c = 0; c < 0x20; ++c) {
        table[static_cast<size_t>(c)] = 5;
    }
    for (const char c : { '\b', '\f', '\n', '\r', '\t', '"', '\\' }) {
        table[static_cast<Byte>(c)] = 1;
    }
    return table;
}
constexpr std::array<quint8, 256> EscapeExtra = makeEscapeExtraTable();

qsizetype jsonStringSize(QByteArrayView text)
{
    qsizetype size = text.size() + 2;
    for (const char c : text) {
        size += EscapeExtra[static_cast<Byte>(c)];
    }
    return size;
}

char *writeJsonString(char *out, QByteArrayView text)
{
    constexpr std::string_view HexDigits = "0123456789abcdef";
    *out++ = '"';
    const char *p = text.data();
    const char *const end = p + text.size();
    while (p != end) {
        // Copy the longest run that needs no escaping in one go.
        const char *run = p;
        while (run != end && EscapeExtra[static_cast<Byte>(*run)] == 0) {
            ++run;
        }
        if (run != p) {
            std::memcpy(out, p, static_cast<size_t>(run - p));
            out += run - p;
            p = run;
        }
        if (p == end) {
            break;
        }
        const char c = *p++;
        *out++ = '\\';
        switch (c) {
        case '"':
            *out++ = '"';
            break;
        case '\\':
            *out++ = '\\';
            break;
        case '\b':
            *out++ = 'b';
            break;
        case '\f':
            *out++ = 'f';
            break;
        case '\n':
            *out++ = 'n';
            break;
        case '\r':
            *out++ = 'r';
            break;
        case '\t':
            *out++ = 't';
            break;
        default: // other control characters, lower-case hex like JSON.stringify
            *out++ = 'u';
            *out++ = '0';
            *out++ = '0';
            *out++ = HexDigits[(static_cast<Byte>(c) >> 4) & 0xF];
            *out++ = HexDigits[static_cast<Byte>(c) & 0xF];
            break;
        }
    }
    *out++ = '"';
    return out;
}

// Pieces of an output frame. Encoders list their pieces once; the total size is summed first so
// the frame is built in a single allocation of exactly the right size.
struct Raw
{
    QByteArrayView bytes;
    qsizetype size() const { return bytes.size(); }
    char *write(char *out) const
    {
        if (!bytes.isEmpty()) {
            std::memcpy(out, bytes.data(), static_cast<size_t>(bytes.size()));
        }
        return out + bytes.size();
    }
};

class Quoted
{
public:
    explicit Quoted(QByteArrayView text) : m_text(text), m_size(jsonStringSize(text)) { }
    qsizetype size() const { return m_size; }
    char *write(char *out) const { return writeJsonString(out, m_text); }

private:
    QByteArrayView m_text;
    qsizetype m_size;
};

struct OneByte
{
    Byte value;
    qsizetype size() const { return 1; }
    char *write(char *out) const
    {
        *out = static_cast<char>(value);
        return out + 1;
    }
};

// A raw JSON token supplied by the caller; an empty one would make the frame invalid JSON, so
// it stands for null.
Raw token(QByteArrayView json)
{
    return Raw{ json.isEmpty() ? QByteArrayView("null") : json };
}

template <typename... Pieces>
QByteArray assemble(const Pieces &...pieces)
{
    const qsizetype size = (pieces.size() + ...);
    QByteArray frame(size, Qt::Uninitialized);
    char *out = frame.data();
    ((out = pieces.write(out)), ...);
    Q_ASSERT(out == frame.constData() + size);
    return frame;
}

} // namespace

std::optional<Vsn> parseVsn(QByteArrayView value, bool present)
{
    if (!present) {
        return Vsn::V1;
    }
    const qsizetype plus = value.indexOf('+');
    const QByteArrayView withPre = plus < 0 ? value : value.first(plus);
    if (plus >= 0 && !isIdentifierList(value.sliced(plus + 1), false)) {
        return std::nullopt;
    }
    const qsizetype dash = withPre.indexOf('-');
    const QByteArrayView core = dash < 0 ? withPre : withPre.first(dash);
    const bool isPreRelease = dash >= 0;
    if (isPreRelease && !isIdentifierList(withPre.sliced(dash + 1), true)) {
        return std::nullopt;
    }

    const qsizetype firstDot = core.indexOf('.');
    const qsizetype secondDot = firstDot < 0 ? -1 : core.indexOf('.', firstDot + 1);
    if (secondDot < 0 || core.indexOf('.', secondDot + 1) >= 0) {
        return std::nullopt;
    }
    const QByteArrayView major = core.first(firstDot);
    const QByteArrayView minor = core.sliced(firstDot + 1, secondDot - firstDot - 1);
    const QByteArrayView patch = core.sliced(secondDot + 1);
    if (!isVersionNumber(major) || !isVersionNumber(minor) || !isVersionNumber(patch)) {
        return std::nullopt;
    }

    if (minor != QByteArrayView("0")) {
        return std::nullopt;
    }
    if (isPreRelease && patch == QByteArrayView("0")) { // X.0.0-pre < X.0.0, the lower bound
        return std::nullopt;
    }
    if (major == QByteArrayView("1")) {
        return Vsn::V1;
    }
    if (major == QByteArrayView("2")) {
        return Vsn::V2;
    }
    return std::nullopt;
}

Result<InboundMessage> decodeText(QByteArrayView frame, Vsn vsn)
{
    return vsn == Vsn::V2 ? decodeV2Text(frame) : decodeV1Text(frame);
}

Result<InboundMessage> decodeBinary(QByteArrayView frame)
{
    if (frame.isEmpty()) {
        return Error{ QStringLiteral("empty binary frame") };
    }
    switch (byteAt(frame, 0)) {
    case 3:
        return decodeUserBroadcastPush(frame);
    case 0:
        return decodeBinaryPush(frame);
    default:
        return Error{ QStringLiteral("unsupported binary frame kind") };
    }
}

QByteArray encodeReply(Vsn vsn, QByteArrayView joinRefJson, QByteArrayView refJson,
                       QByteArrayView topic, QByteArrayView status, QByteArrayView responseJson)
{
    if (vsn == Vsn::V2) {
        return assemble(Raw{ "[" }, token(joinRefJson), Raw{ "," }, token(refJson), Raw{ "," },
                        Quoted(topic), Raw{ R"(,"phx_reply",{"status":)" }, Quoted(status),
                        Raw{ ",\"response\":" }, Raw{ responseJson }, Raw{ "}]" });
    }
    return assemble(Raw{ "{\"topic\":" }, Quoted(topic),
                    Raw{ R"(,"event":"phx_reply","payload":{"status":)" }, Quoted(status),
                    Raw{ ",\"response\":" }, Raw{ responseJson }, Raw{ "},\"ref\":" },
                    token(refJson), Raw{ "}" });
}

QByteArray encodePush(Vsn vsn, QByteArrayView joinRefJson, QByteArrayView refJson,
                      QByteArrayView topic, QByteArrayView event, QByteArrayView payloadJson)
{
    if (vsn == Vsn::V2) {
        return assemble(Raw{ "[" }, token(joinRefJson), Raw{ "," }, token(refJson), Raw{ "," },
                        Quoted(topic), Raw{ "," }, Quoted(event), Raw{ "," }, Raw{ payloadJson },
                        Raw{ "]" });
    }
    return assemble(Raw{ "{\"topic\":" }, Quoted(topic), Raw{ ",\"event\":" }, Quoted(event),
                    Raw{ ",\"payload\":" }, Raw{ payloadJson }, Raw{ ",\"ref\":" }, token(refJson),
                    Raw{ "}" });
}

std::optional<QByteArray> encodeUserBroadcast(QByteArrayView topic, QByteArrayView userEvent,
                                              QByteArrayView metadataJson, bool payloadIsJson,
                                              QByteArrayView payload)
{
    constexpr qsizetype MaxFieldBytes = 255; // one length byte each; upstream raises beyond it
    if (topic.size() > MaxFieldBytes || userEvent.size() > MaxFieldBytes
        || metadataJson.size() > MaxFieldBytes) {
        return std::nullopt;
    }
    return assemble(OneByte{ 4 }, OneByte{ static_cast<Byte>(topic.size()) },
                    OneByte{ static_cast<Byte>(userEvent.size()) },
                    OneByte{ static_cast<Byte>(metadataJson.size()) },
                    OneByte{ static_cast<Byte>(payloadIsJson ? 1 : 0) }, Raw{ topic },
                    Raw{ userEvent }, Raw{ metadataJson }, Raw{ payload });
}

QByteArray userBroadcastAsJsonPayload(QByteArrayView userEvent, QByteArrayView payloadJson,
                                      QByteArrayView metadataJson)
{
    // Upstream builds an Elixir map with string keys; Jason emits small maps in sorted key
    // order, so "meta" sits between "event" and "payload". Matched for byte-identical output.
    if (metadataJson.isEmpty()) {
        return assemble(Raw{ "{\"event\":" }, Quoted(userEvent), Raw{ ",\"payload\":" },
                        Raw{ payloadJson }, Raw{ R"(,"type":"broadcast"})" });
    }
    return assemble(Raw{ "{\"event\":" }, Quoted(userEvent), Raw{ ",\"meta\":" },
                    Raw{ metadataJson }, Raw{ ",\"payload\":" }, Raw{ payloadJson },
                    Raw{ R"(,"type":"broadcast"})" });
}

void appendJsonString(QByteArray &out, QByteArrayView text)
{
    const qsizetype oldSize = out.size();
    out.resize(oldSize + jsonStringSize(text));
    char *const end = writeJsonString(out.data() + oldSize, text);
    Q_ASSERT(end == out.constData() + out.size());
    Q_UNUSED(end);
}

QByteArray jsonString(QByteArrayView text)
{
    return assemble(Quoted(text));
}

} // namespace rt::protocol
