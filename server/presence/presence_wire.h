#pragma once

#include "server/cluster/links/frame_kinds.h"
#include "server/presence/presence_change.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

#include <variant>

// The node-link messages of presence replication (frame kinds 20-31), as pure functions.
//
// Every payload starts with a version byte (1); integers are big-endian; a byte string is a u32
// length and the bytes; a topic is tenant bytes, a flags byte (bit 0: private) and sub-topic
// bytes; a meta is the compact JSON text of an object. Decoding bytes from a peer never crashes
// and never over-allocates: any malformation (truncation, trailing bytes, lengths past the end,
// a meta that is not a JSON object, an unknown op or version) is an error value.
namespace rt::presence::wire {

using cluster::links::FrameKind;
using cluster::links::kindValue;
inline constexpr quint8 KindDelta = kindValue(FrameKind::PresenceDelta);
inline constexpr quint8 KindSyncChunk = kindValue(FrameKind::PresenceSyncChunk);
inline constexpr quint8 KindMarker = kindValue(FrameKind::PresenceMarker);
inline constexpr quint8 KindResyncRequest = kindValue(FrameKind::PresenceResyncRequest);
// Presence's kinds are consecutive (cluster/links/frame_kinds.h): a frame kind outside this
// range is not presence's to judge.
inline constexpr quint8 FirstKind = KindDelta;
inline constexpr quint8 LastKind = KindResyncRequest;
static_assert(KindSyncChunk == FirstKind + 1 && KindMarker == FirstKind + 2
                      && LastKind == FirstKind + 3,
              "presence frame kinds must stay consecutive");
inline constexpr bool isPresenceKind(quint8 kind)
{
    return kind >= FirstKind && kind <= LastKind;
}

inline constexpr quint8 Version = 1;

// One change of one of the origin's presences. `sequence` numbers the origin's changes from 1
// within one `incarnation` (a random id per replicator, i.e. per process).
struct Delta
{
    quint64 incarnation = 0;
    quint64 sequence = 0;
    PresenceChange change;
};

// One piece of a full sync: every presence of the origin after its change number `sequence`.
// Chunks are numbered from 0; the last has `last` set. A receiver replaces what it held from
// the origin once the last chunk is in.
struct SyncChunk
{
    quint64 incarnation = 0;
    quint64 sequence = 0;
    quint32 index = 0;
    bool last = true;
    QList<PresenceRecord> records;
};

// "My last change is number `sequence`": sent periodically after the deltas, so a receiver that
// lost frames (at-most-once links) notices even when no further change follows.
struct Marker
{
    quint64 incarnation = 0;
    quint64 sequence = 0;
};

// "Send me a full sync": from a receiver that noticed a gap.
struct ResyncRequest
{ };

using Message = std::variant<Delta, SyncChunk, Marker, ResyncRequest>;

QByteArray encode(const Delta &delta);
QByteArray encode(const SyncChunk &chunk);
QByteArray encode(const Marker &marker);
QByteArray encode(const ResyncRequest &request);
quint8 kindOf(const Message &message);

// A full sync as chunk payloads of at most about `maxChunkBytes` each (a record larger than
// that gets a chunk of its own; no records: one empty chunk), in order.
QList<QByteArray> encodeSync(quint64 incarnation, quint64 sequence,
                             const QList<PresenceRecord> &records, qsizetype maxChunkBytes);

// The message in a frame of `kind` (20-31) from a peer.
Result<Message> decode(quint8 kind, QByteArrayView payload);

} // namespace rt::presence::wire
