#pragma once

#include "server/pubsub/outbound_message.h"
#include "server/pubsub/topic_key.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <functional>

namespace rt::pubsub {

// Why envelope bytes could not be made or read. Decoding never crashes on bad bytes: every
// problem is one of these.
struct EnvelopeError
{
    enum class Code : quint8 {
        NotForwardable, // encode: Audience::Members (member ids are node-local)
        Truncated, // a field runs past the end of the frame
        UnsupportedVersion,
        BadKind,
        BadFlags,
        BadAudience,
        EmptyTenant,
        Inconsistent, // fields that cannot go together (e.g. a user broadcast for presence)
        TrailingBytes,
    };
    Code code = Code::Truncated;
    QString message;
};

// One broadcast as it crosses a node link (frame kind ClusterFrameKind::Envelope): what a
// remote node needs to rebuild an equivalent OutboundMessage, and nothing that only means
// something on the sending node:
// - the sender as (node, member) instead of an excluded member id: member ids are per node, so
//   only the sender's own node excludes it (the message may come back to it from the home),
// - no DeliveryCounting (the receiving node counts against its own tenant counters; it only
//   learns whether the sender counted the message as a broadcast event),
// - no Audience::Members messages at all (encode refuses them; routing postgres_changes by
//   subscriber is separate work).
//
// Wire format, big-endian:
//   u8 version (1 or 2) | u8 kind (0 push, 1 user broadcast) | u8 flags | u8 audience
//   | bytes tenant | bytes subTopic | bytes event | bytes metadata | bytes payload
//   [version 2: | u64 epoch | u64 offset | u64 previous | bytes senderNode | u64 senderMember
//    | u64 forwardId]
// where bytes = u32 length + that many bytes; flags: 0x01 private topic, 0x02 payload is
// JSON, 0x04 counted as a broadcast event by the sender; audience: 0 broadcast readers,
// 1 presence readers, 2 everyone. Nothing may follow the last field. Version 1 (no position,
// no sender) is written whenever it suffices, so nodes of the previous release still read
// unnumbered broadcasts.
struct ClusterEnvelope
{
    enum class Kind : quint8 { Push = 0, UserBroadcast = 1 };

    Kind kind = Kind::Push;
    TopicKey topic;
    QByteArray event; // push: Phoenix event; user broadcast: user event
    QByteArray payload;
    QByteArray metadata; // user broadcast only; may be empty
    Audience audience = Audience::BroadcastReaders;
    bool payloadIsJson = true; // always true for pushes
    // The sender counted deliveries as broadcast events (DeliveryCounting::shutsDownReceivers):
    // client and HTTP broadcasts. False for presence diffs and database-originated messages.
    bool countsAsBroadcast = false;
    // Where the home numbered it (epoch 0: not numbered; previous below offset, or 0); meta
    // already carries epoch and offset.
    StreamPosition position;
    // Who sent it (a member of a client socket on senderNode), or empty/0.
    QString senderNode;
    quint64 senderMember = 0;
    // The sender's node's number for a broadcast it sent to the home (0: none); echoed in the
    // home's numbered copy.
    quint64 forwardId = 0;

    // The message this envelope describes on node `selfNodeId`, counted with `counting` (the
    // receiver's own).
    OutboundMessagePtr toMessage(DeliveryCounting counting, const QString &selfNodeId = {}) const;

    friend bool operator==(const ClusterEnvelope &a, const ClusterEnvelope &b)
    {
        return a.kind == b.kind && a.topic == b.topic && a.event == b.event
                && a.payload == b.payload && a.metadata == b.metadata && a.audience == b.audience
                && a.payloadIsJson == b.payloadIsJson && a.countsAsBroadcast == b.countsAsBroadcast
                && a.position == b.position && a.position.previous == b.position.previous
                && a.senderNode == b.senderNode && a.senderMember == b.senderMember
                && a.forwardId == b.forwardId;
    }
};

// The envelope of `message` published on node `selfNodeId` (the sender: its remote sender, or
// this node's excluded member). Fails (NotForwardable) for Audience::Members messages.
Result<ClusterEnvelope, EnvelopeError> envelopeOf(const OutboundMessage &message,
                                                  const QString &selfNodeId = {});

// Wire bytes of an envelope (see ClusterEnvelope for the format).
QByteArray encodeEnvelope(const ClusterEnvelope &envelope);
// envelopeOf + encodeEnvelope.
Result<QByteArray, EnvelopeError> encodeEnvelope(const OutboundMessage &message,
                                                 const QString &selfNodeId = {});

// Reads one envelope from a whole frame payload (untrusted: another node's bytes).
Result<ClusterEnvelope, EnvelopeError> decodeEnvelope(QByteArrayView bytes);

} // namespace rt::pubsub
