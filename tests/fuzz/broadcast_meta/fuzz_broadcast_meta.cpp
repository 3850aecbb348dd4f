// libFuzzer target for what the server writes into bytes a client sent: the topic position added
// to a text broadcast's payload (OutboundMessage::withPosition, byte-preserving JSON surgery on
// the client's object) and the persist option read from a kind-3 frame's metadata
// (cdc::persistFromMetadata).
//
// The input is the client's JSON text. Besides crashes, the target aborts when a promise
// breaks: for a JSON object, the numbered payload is valid JSON, an object whose "meta" is an
// object carrying exactly the position's epoch and offset, with every other top-level member
// unchanged (and meta's other members too, but the sender's own epoch and offset); a persist
// option that is valid has a ttl in 1..MaxPersistTtlSeconds or none, and one not asked is valid.
#include "server/cdc/channel_authorization.h"
#include "server/pubsub/outbound_message.h"
#include "shared/protocol/json_scan.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

const rt::pubsub::StreamPosition Position{ 0x0123456789abcdefULL, 77 };

void checkPosition(const QByteArray &payload)
{
    const QJsonDocument before = QJsonDocument::fromJson(payload);
    if (!before.isObject() || !rt::protocol::json::isValid(payload)) {
        return; // never accepted as a text broadcast
    }
    const auto message =
            rt::pubsub::OutboundMessage::push(rt::pubsub::TopicKey("t", false, "r"), "broadcast",
                                              payload, rt::pubsub::Audience::BroadcastReaders);
    const auto numbered = rt::pubsub::OutboundMessage::withPosition(*message, Position);
    require(rt::protocol::json::isValid(numbered->payload()));
    const QJsonObject after = QJsonDocument::fromJson(numbered->payload()).object();
    const QJsonObject meta = after.value(QLatin1String("meta")).toObject();
    require(meta.value(QLatin1String("epoch")).toString()
            == QString::fromLatin1(Position.epochText()));
    require(meta.value(QLatin1String("offset")).toInteger() == 77);
    QJsonObject rest = after;
    rest.remove(QLatin1String("meta"));
    QJsonObject original = before.object();
    const QJsonValue originalMeta = original.take(QLatin1String("meta"));
    require(rest == original);
    if (originalMeta.isObject()) {
        QJsonObject kept = originalMeta.toObject();
        kept.remove(QLatin1String("epoch"));
        kept.remove(QLatin1String("offset"));
        QJsonObject ours = meta;
        ours.remove(QLatin1String("epoch"));
        ours.remove(QLatin1String("offset"));
        require(kept == ours);
    }
}

void checkPersist(const QByteArray &metadata)
{
    const rt::cdc::PersistOption option = rt::cdc::persistFromMetadata(metadata);
    if (!option.asked) {
        require(option.valid && !option.ttlSeconds);
    }
    if (option.ttlSeconds) {
        require(option.valid && *option.ttlSeconds >= 1
                && *option.ttlSeconds <= rt::cdc::MaxPersistTtlSeconds);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray input(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    checkPosition(input);
    checkPersist(input);
    return 0;
}
