// Fuzzes binary frames through decodeBinary. An independent, naive reading of the kind-3 and
// kind-0 layouts decides whether a frame must be accepted and what its fields are; accepted
// kind-3 frames are re-encoded as kind 4 (and as the V1 JSON form) and checked field by field.
// Any violated invariant aborts so that libFuzzer records the input.
#include "shared/protocol/json_scan.h"
#include "shared/protocol/phoenix_codec.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace rt::protocol;

#define FUZZ_REQUIRE(condition) require((condition), #condition, __LINE__)

namespace {

void require(bool condition, const char *text, int line)
{
    if (!condition) {
        std::fprintf(stderr, "fuzz_phoenix_binary:%d: invariant violated: %s\n", line, text);
        std::abort();
    }
}

struct Fields
{
    QByteArrayView joinRef;
    QByteArrayView ref;
    QByteArrayView topic;
    QByteArrayView event; // the user event for kind 3
    QByteArrayView metadata;
    QByteArrayView payload;
    bool isJson = false;
};

// The layout of spec/client-protocol.md §2.1 (kind 3) and server-protocol.md §2.4 (kind 0),
// read with plain arithmetic; nullopt if a length runs past the end.
std::optional<Fields> readFields(QByteArrayView frame)
{
    if (frame.isEmpty())
        return std::nullopt;
    const bool isKind3 = frame[0] == 3;
    const qsizetype headerSize = isKind3 ? 7 : 5;
    if (frame.size() < headerSize)
        return std::nullopt;
    const auto length = [&frame](int index) {
        return static_cast<qsizetype>(static_cast<uint8_t>(frame[index]));
    };
    qsizetype total = headerSize;
    for (int i = 1; i <= (isKind3 ? 5 : 4); ++i)
        total += length(i);
    if (total > frame.size())
        return std::nullopt;
    Fields fields;
    qsizetype offset = headerSize;
    const auto next = [&](qsizetype size) {
        const QByteArrayView field = frame.sliced(offset, size);
        offset += size;
        return field;
    };
    fields.joinRef = next(length(1));
    fields.ref = next(length(2));
    fields.topic = next(length(3));
    fields.event = next(length(4));
    if (isKind3) {
        fields.metadata = next(length(5));
        fields.isJson = frame[6] != 0;
    }
    fields.payload = frame.sliced(offset);
    return fields;
}

QByteArray decodedRef(const QByteArray &token)
{
    QByteArray text;
    FUZZ_REQUIRE(json::decodeString(token, text));
    return text;
}

void checkKind3(const InboundMessage &message, const Fields &fields)
{
    FUZZ_REQUIRE(message.isUserBroadcast);
    FUZZ_REQUIRE(message.event == QByteArrayView("broadcast"));
    FUZZ_REQUIRE(message.userEvent == fields.event);
    FUZZ_REQUIRE(message.metadata == fields.metadata);
    FUZZ_REQUIRE(message.payloadIsJson == fields.isJson);

    // Self echo / delivery to V2 subscribers: kind 4 with the same fields, byte for byte.
    const std::optional<QByteArray> kind4 =
            encodeUserBroadcast(message.topic, message.userEvent, message.metadata,
                                message.payloadIsJson, message.payload);
    FUZZ_REQUIRE(kind4.has_value()); // every field came from a one-byte length
    const QByteArrayView out(*kind4);
    FUZZ_REQUIRE(out.size() >= 5 && out[0] == 4);
    const qsizetype topicSize = static_cast<uint8_t>(out[1]);
    const qsizetype eventSize = static_cast<uint8_t>(out[2]);
    const qsizetype metadataSize = static_cast<uint8_t>(out[3]);
    FUZZ_REQUIRE(out[4] == (message.payloadIsJson ? 1 : 0));
    FUZZ_REQUIRE(out.size() == 5 + topicSize + eventSize + metadataSize + message.payload.size());
    FUZZ_REQUIRE(out.sliced(5, topicSize) == message.topic);
    FUZZ_REQUIRE(out.sliced(5 + topicSize, eventSize) == message.userEvent);
    FUZZ_REQUIRE(out.sliced(5 + topicSize + eventSize, metadataSize) == message.metadata);
    FUZZ_REQUIRE(out.sliced(5 + topicSize + eventSize + metadataSize) == message.payload);

    // Delivery to V1 subscribers: one JSON text frame, valid UTF-8.
    if (message.payloadIsJson) {
        const QByteArray json =
                userBroadcastAsJsonPayload(message.userEvent, message.payload, message.metadata);
        QList<json::Member> members;
        FUZZ_REQUIRE(json::splitObject(json, members));
        FUZZ_REQUIRE(members.size() == (message.metadata.isEmpty() ? 3 : 4));
        const QByteArray frame =
                encodePush(Vsn::V1, "null", "null", message.topic, "broadcast", json);
        FUZZ_REQUIRE(json::isValid(frame) && json::isValidUtf8(frame));
        const auto decoded = decodeText(frame, Vsn::V1);
        FUZZ_REQUIRE(decoded.ok() && decoded->payload == json && decoded->topic == message.topic);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView frame(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const auto message = decodeBinary(frame);

    const int kind = frame.isEmpty() ? -1 : static_cast<uint8_t>(frame[0]);
    const std::optional<Fields> fields =
            kind == 0 || kind == 3 ? readFields(frame) : std::optional<Fields>();
    const bool expectOk = fields && json::isValidUtf8(fields->joinRef)
            && json::isValidUtf8(fields->ref) && json::isValidUtf8(fields->topic)
            && json::isValidUtf8(fields->event)
            && (fields->metadata.isEmpty() || json::isValid(fields->metadata))
            && (!fields->isJson || json::isValid(fields->payload));
    FUZZ_REQUIRE(message.ok() == expectOk);
    if (!message.ok())
        return 0;

    FUZZ_REQUIRE(decodedRef(message->joinRef) == fields->joinRef);
    FUZZ_REQUIRE(decodedRef(message->ref) == fields->ref);
    FUZZ_REQUIRE(message->topic == fields->topic);
    FUZZ_REQUIRE(message->payload == fields->payload);
    if (kind == 3) {
        checkKind3(*message, *fields);
    } else {
        FUZZ_REQUIRE(!message->isUserBroadcast && !message->payloadIsJson);
        FUZZ_REQUIRE(message->event == fields->event);
        FUZZ_REQUIRE(message->userEvent.isEmpty() && message->metadata.isEmpty());
    }

    // The ack reply echoes topic and refs in a text frame: it must be valid JSON and UTF-8.
    const QByteArray ack =
            encodeReply(Vsn::V2, message->joinRef, message->ref, message->topic, "ok", "{}");
    FUZZ_REQUIRE(json::isValid(ack) && json::isValidUtf8(ack));
    const auto decodedAck = decodeText(ack, Vsn::V2);
    FUZZ_REQUIRE(decodedAck.ok() && decodedAck->joinRef == message->joinRef
                 && decodedAck->ref == message->ref && decodedAck->topic == message->topic);
    return 0;
}
