// libFuzzer target for the presence replication wire codec (server/presence/presence_wire.h):
// these payloads arrive from other nodes over node links. The first input byte picks the frame
// kind (20 + byte % 12, so kinds without a message are covered too), the rest is the payload.
// Besides crashes, the target aborts when a decoded message does not survive encode + decode
// unchanged, and it applies decoded records to a TopicPresence the way the store does (puts
// and untracks under a remote origin, then presence_state), so hostile keys, refs and metas
// reach the diff and state code too.
#include "server/presence/presence_wire.h"
#include "server/presence/topic_presence.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

using namespace rt::presence;

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

QByteArray reencode(const wire::Message &message)
{
    if (const auto *delta = std::get_if<wire::Delta>(&message)) {
        return wire::encode(*delta);
    }
    if (const auto *chunk = std::get_if<wire::SyncChunk>(&message)) {
        return wire::encode(*chunk);
    }
    if (const auto *marker = std::get_if<wire::Marker>(&message)) {
        return wire::encode(*marker);
    }
    return wire::encode(std::get<wire::ResyncRequest>(message));
}

bool sameMessage(const wire::Message &a, const wire::Message &b)
{
    if (a.index() != b.index()) {
        return false;
    }
    if (const auto *delta = std::get_if<wire::Delta>(&a)) {
        const auto &other = std::get<wire::Delta>(b);
        return delta->incarnation == other.incarnation && delta->sequence == other.sequence
                && delta->change == other.change;
    }
    if (const auto *chunk = std::get_if<wire::SyncChunk>(&a)) {
        const auto &other = std::get<wire::SyncChunk>(b);
        return chunk->incarnation == other.incarnation && chunk->sequence == other.sequence
                && chunk->index == other.index && chunk->last == other.last
                && chunk->records == other.records;
    }
    if (const auto *marker = std::get_if<wire::Marker>(&a)) {
        const auto &other = std::get<wire::Marker>(b);
        return marker->incarnation == other.incarnation && marker->sequence == other.sequence;
    }
    return true;
}

void apply(TopicPresence &topic, const PresenceChange &change)
{
    const MemberRef who{ 1, change.record.memberId };
    const PresenceDiff diff = change.op == PresenceChange::Op::Track
            ? topic.put(who, change.record.key, change.record.meta, change.record.ref)
            : topic.untrack(who);
    (void)diff.toJson();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    const quint8 kind = static_cast<quint8>(wire::FirstKind + data[0] % 12);
    const QByteArrayView payload(reinterpret_cast<const char *>(data + 1),
                                 static_cast<qsizetype>(size - 1));
    const auto decoded = wire::decode(kind, payload);
    if (!decoded) {
        require(!decoded.error().message.isEmpty());
        return 0;
    }
    require(wire::kindOf(*decoded) == kind);
    const auto again = wire::decode(kind, reencode(*decoded));
    require(again.ok() && sameMessage(*decoded, *again));

    TopicPresence topic;
    if (const auto *delta = std::get_if<wire::Delta>(&*decoded)) {
        apply(topic, delta->change);
        apply(topic, delta->change); // the same version again: no change
        require(topic.size() <= 1);
    } else if (const auto *chunk = std::get_if<wire::SyncChunk>(&*decoded)) {
        for (const PresenceRecord &record : chunk->records) {
            apply(topic, PresenceChange{ PresenceChange::Op::Track, record });
        }
        (void)topic.stateJson();
        require(topic.removeOrigin(1).joins.isEmpty());
        require(topic.isEmpty());
    }
    return 0;
}
