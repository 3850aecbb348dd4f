// Fuzzes text frames: the JSON scanner (isValid, splitArray, splitObject, decodeString) and
// decodeText for both serializers, and checks that they agree with each other and that what the
// encoders build from decoded fields decodes back to the same fields. Any violated invariant
// aborts so that libFuzzer records the input.
#include "shared/protocol/json_scan.h"
#include "shared/protocol/phoenix_codec.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace rt::protocol;

#define FUZZ_REQUIRE(condition) require((condition), #condition, __LINE__)

namespace {

void require(bool condition, const char *text, int line)
{
    if (!condition) {
        std::fprintf(stderr, "fuzz_phoenix_text:%d: invariant violated: %s\n", line, text);
        std::abort();
    }
}

bool isWhitespace(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

QByteArrayView trimmed(QByteArrayView text)
{
    while (!text.isEmpty() && isWhitespace(text.front()))
        text = text.sliced(1);
    while (!text.isEmpty() && isWhitespace(text.back()))
        text.chop(1);
    return text;
}

QByteArrayView spanText(QByteArrayView text, const json::Span &span)
{
    return text.sliced(span.begin, span.end - span.begin);
}

bool isScalarKind(json::Kind kind)
{
    return kind != json::Kind::Object && kind != json::Kind::Array;
}

json::Kind kindOfFirstByte(char c)
{
    switch (c) {
    case '{':
        return json::Kind::Object;
    case '[':
        return json::Kind::Array;
    case '"':
        return json::Kind::String;
    case 't':
        return json::Kind::True;
    case 'f':
        return json::Kind::False;
    case 'n':
        return json::Kind::Null;
    default:
        return json::Kind::Number;
    }
}

// A span must be an in-bounds, trimmed, valid JSON value of the kind it claims.
void checkSpan(QByteArrayView text, const json::Span &span, qsizetype notBefore)
{
    FUZZ_REQUIRE(span.begin >= notBefore && span.begin < span.end && span.end <= text.size());
    const QByteArrayView value = spanText(text, span);
    FUZZ_REQUIRE(json::isValid(value));
    FUZZ_REQUIRE(span.kind == kindOfFirstByte(value.front()));
    FUZZ_REQUIRE(!isWhitespace(value.front()) && !isWhitespace(value.back()));
}

// Decoding a string literal and re-encoding it must give back an equivalent literal.
void checkStringLiteral(QByteArrayView literal)
{
    QByteArray decoded;
    FUZZ_REQUIRE(json::decodeString(literal, decoded));
    FUZZ_REQUIRE(json::isValidUtf8(decoded));
    const QByteArray reencoded = jsonString(decoded);
    FUZZ_REQUIRE(json::isValid(reencoded));
    QByteArray again;
    FUZZ_REQUIRE(json::decodeString(reencoded, again));
    FUZZ_REQUIRE(again == decoded);
}

bool checkArray(QByteArrayView text, bool isValidJson, QList<json::Span> &elements)
{
    const bool isArray = json::splitArray(text, elements);
    std::array<json::Span, 3> prefix;
    qsizetype count = -1;
    FUZZ_REQUIRE(json::splitArray(text, prefix.data(), prefix.size(), count) == isArray);
    if (!isArray) {
        FUZZ_REQUIRE(elements.isEmpty() && count == 0);
        return false;
    }
    FUZZ_REQUIRE(isValidJson);
    FUZZ_REQUIRE(trimmed(text).front() == '[');
    FUZZ_REQUIRE(count == elements.size());
    qsizetype notBefore = 0;
    for (qsizetype i = 0; i < elements.size(); ++i) {
        checkSpan(text, elements[i], notBefore);
        notBefore = elements[i].end;
        if (i < static_cast<qsizetype>(prefix.size())) {
            FUZZ_REQUIRE(prefix[static_cast<size_t>(i)].begin == elements[i].begin);
            FUZZ_REQUIRE(prefix[static_cast<size_t>(i)].end == elements[i].end);
            FUZZ_REQUIRE(prefix[static_cast<size_t>(i)].kind == elements[i].kind);
        }
    }
    return true;
}

bool checkObject(QByteArrayView text, bool isValidJson, QList<json::Member> &members)
{
    const bool isObject = json::splitObject(text, members);
    std::array<json::Member, 2> prefix;
    qsizetype count = -1;
    FUZZ_REQUIRE(json::splitObject(text, prefix.data(), prefix.size(), count) == isObject);
    if (!isObject) {
        FUZZ_REQUIRE(members.isEmpty() && count == 0);
        return false;
    }
    FUZZ_REQUIRE(isValidJson);
    FUZZ_REQUIRE(trimmed(text).front() == '{');
    FUZZ_REQUIRE(count == members.size());
    qsizetype notBefore = 0;
    for (qsizetype i = 0; i < members.size(); ++i) {
        checkSpan(text, members[i].key, notBefore);
        FUZZ_REQUIRE(members[i].key.kind == json::Kind::String);
        checkStringLiteral(spanText(text, members[i].key));
        checkSpan(text, members[i].value, members[i].key.end);
        notBefore = members[i].value.end;
        if (i < static_cast<qsizetype>(prefix.size())) {
            FUZZ_REQUIRE(prefix[static_cast<size_t>(i)].key.begin == members[i].key.begin);
            FUZZ_REQUIRE(prefix[static_cast<size_t>(i)].value.end == members[i].value.end);
        }
    }
    return true;
}

// Whether an independent reading of the split says the frame is a well-formed Phoenix message;
// decodeText must agree exactly.
bool expectDecodable(QByteArrayView text, Vsn vsn, const QList<json::Span> &elements,
                     const QList<json::Member> &members, bool isArray, bool isObject)
{
    const json::Span *joinRef = nullptr;
    const json::Span *ref = nullptr;
    const json::Span *topic = nullptr;
    const json::Span *event = nullptr;
    const json::Span *payload = nullptr;
    if (vsn == Vsn::V2) {
        if (!isArray || elements.size() < 5)
            return false;
        joinRef = &elements[0];
        ref = &elements[1];
        topic = &elements[2];
        event = &elements[3];
        payload = &elements[4];
    } else {
        if (!isObject)
            return false;
        for (const json::Member &member : members) {
            QByteArray key;
            FUZZ_REQUIRE(json::decodeString(spanText(text, member.key), key));
            if (key == QByteArrayView("topic"))
                topic = &member.value;
            else if (key == QByteArrayView("event"))
                event = &member.value;
            else if (key == QByteArrayView("payload"))
                payload = &member.value;
            else if (key == QByteArrayView("ref"))
                ref = &member.value;
            else if (key == QByteArrayView("join_ref"))
                joinRef = &member.value;
        }
        if (!topic || !event || !payload || !ref)
            return false;
    }
    return (!joinRef || isScalarKind(joinRef->kind)) && isScalarKind(ref->kind)
            && topic->kind == json::Kind::String && event->kind == json::Kind::String;
}

void checkDecodedMessage(const InboundMessage &message, Vsn vsn)
{
    FUZZ_REQUIRE(!message.isUserBroadcast && message.payloadIsJson);
    FUZZ_REQUIRE(json::isValid(message.payload));
    FUZZ_REQUIRE(json::isValid(message.joinRef) && json::isValid(message.ref));
    FUZZ_REQUIRE(isScalarKind(kindOfFirstByte(message.joinRef.front())));
    FUZZ_REQUIRE(isScalarKind(kindOfFirstByte(message.ref.front())));
    FUZZ_REQUIRE(json::isValidUtf8(message.topic) && json::isValidUtf8(message.event));

    // Whatever we echo back must be valid JSON and valid UTF-8 (Node `ws` closes otherwise).
    const QByteArray push = encodePush(vsn, message.joinRef, message.ref, message.topic,
                                       message.event, message.payload);
    FUZZ_REQUIRE(json::isValid(push) && json::isValidUtf8(push));
    const auto again = decodeText(push, vsn);
    FUZZ_REQUIRE(again.ok());
    FUZZ_REQUIRE(again->joinRef == (vsn == Vsn::V2 ? message.joinRef : QByteArray("null")));
    FUZZ_REQUIRE(again->ref == message.ref);
    FUZZ_REQUIRE(again->topic == message.topic);
    FUZZ_REQUIRE(again->event == message.event);
    FUZZ_REQUIRE(again->payload == message.payload);

    const QByteArray reply =
            encodeReply(vsn, message.joinRef, message.ref, message.topic, "ok", message.payload);
    FUZZ_REQUIRE(json::isValid(reply) && json::isValidUtf8(reply));
    const auto decodedReply = decodeText(reply, vsn);
    FUZZ_REQUIRE(decodedReply.ok());
    FUZZ_REQUIRE(decodedReply->event == QByteArrayView("phx_reply"));
    FUZZ_REQUIRE(decodedReply->ref == message.ref);
    FUZZ_REQUIRE(decodedReply->topic == message.topic);
    QList<json::Member> replyMembers;
    FUZZ_REQUIRE(json::splitObject(decodedReply->payload, replyMembers));
    FUZZ_REQUIRE(replyMembers.size() == 2);
    FUZZ_REQUIRE(spanText(decodedReply->payload, replyMembers[1].value) == message.payload);

    const QByteArray asBroadcast =
            userBroadcastAsJsonPayload(message.event, message.payload, message.joinRef);
    FUZZ_REQUIRE(json::isValid(asBroadcast));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView text(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const bool isValidJson = json::isValid(text);
    if (isValidJson)
        FUZZ_REQUIRE(json::isValidUtf8(text));

    QList<json::Span> elements;
    QList<json::Member> members;
    const bool isArray = checkArray(text, isValidJson, elements);
    const bool isObject = checkObject(text, isValidJson, members);
    FUZZ_REQUIRE(!(isArray && isObject));
    if (isValidJson) {
        const char first = trimmed(text).front();
        FUZZ_REQUIRE(isArray == (first == '['));
        FUZZ_REQUIRE(isObject == (first == '{'));
    }

    // decodeString accepts exactly the valid JSON strings with no surrounding whitespace.
    QByteArray decoded;
    const bool isStringLiteral = json::decodeString(text, decoded);
    FUZZ_REQUIRE(isStringLiteral
                 == (isValidJson && !text.isEmpty() && text.front() == '"'
                     && !isWhitespace(text.back())));
    if (isStringLiteral)
        checkStringLiteral(text);

    // Escaping any valid UTF-8 must produce a literal that decodes back to it.
    if (json::isValidUtf8(text)) {
        const QByteArray literal = jsonString(text);
        FUZZ_REQUIRE(json::isValid(literal));
        FUZZ_REQUIRE(json::decodeString(literal, decoded) && decoded == text);
    }

    for (const Vsn vsn : { Vsn::V1, Vsn::V2 }) {
        const auto message = decodeText(text, vsn);
        FUZZ_REQUIRE(message.ok()
                     == expectDecodable(text, vsn, elements, members, isArray, isObject));
        if (message.ok())
            checkDecodedMessage(*message, vsn);
    }
    return 0;
}
