#pragma once

#include "server/cdc/tenant_database.h"
#include "server/cluster/links/frame_kinds.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <variant>
#include <vector>

// What nodes tell each other about tenant change streams over node links: pure encoding and
// decoding (untrusted bytes: every malformation is an error value, never a crash).
namespace rt::cdc::wire {

// Node-link frame kinds (16-19 broadcasts, 20-23 presence).
inline constexpr quint8 ControlFrameKind =
        cluster::links::kindValue(cluster::links::FrameKind::StreamControl);
inline constexpr quint8 DeliveryFrameKind =
        cluster::links::kindValue(cluster::links::FrameKind::StreamDelivery);

// The node-link ordering key of everything about one tenant's stream: a subscriber's answer
// never overtakes its first changes, and the changes keep commit order.
inline QString orderingKey(const QByteArray &tenantId)
{
    return QStringLiteral("stream/") + QString::fromUtf8(tenantId);
}

// "Please own this tenant's stream": the placement picked the receiver.
struct StartStream
{
    QByteArray tenantId;
};
// The receiver cannot own it (does not know the tenant, or has no database for it).
struct StartRefused
{
    QByteArray tenantId;
    QString reason;
};
// A subscribing node's channel bindings for the owner to match (request.memberId is the
// subscribing node's member id).
struct Subscribe
{
    quint64 token = 0;
    SubscribeRequest request;
    // The subscribing node's process (its member record's startedAtMs): member ids are only
    // unique within one, so the owner forgets an earlier process's subscribers when it sees a
    // later one, and stamps every delivery with the process it is meant for.
    quint64 incarnation = 0;
};
struct SubscribeAnswer
{
    quint64 token = 0;
    SubscribeOutcome outcome;
    // The receiver is not (or no longer) the owner: ask the owner the cluster names next.
    bool retry = false;
};
struct Unsubscribe
{
    QByteArray tenantId;
    quint64 memberId = 0;
};
// The receiver of a tenant's deliveries has every frame of log `logId` up to `seq` (the owner
// may forget them). `gap`: a later frame came first, so some were lost: send them again now.
struct DeliveryAck
{
    QByteArray tenantId;
    quint64 logId = 0;
    quint64 seq = 0;
    bool gap = false;
};

using ControlMessage = std::variant<StartStream, StartRefused, Subscribe, SubscribeAnswer,
                                    Unsubscribe, DeliveryAck>;

QByteArray encodeControl(const ControlMessage &message);
Result<ControlMessage> decodeControl(QByteArrayView bytes);

// Where a delivery stands in the owner's log of one tenant's deliveries to one node process
// (server/cdc/delivery_sequence.h): frames are numbered 1, 2, ... within a log; `floor` is the
// oldest frame the owner still keeps (the receiver may skip to it: what lies below is gone).
struct DeliveryStamp
{
    quint64 incarnation = 0; // the receiving node's process (Subscribe::incarnation)
    quint64 logId = 0; // never 0
    quint64 seq = 0; // >= 1
    quint64 floor = 0; // 1 <= floor <= seq

    friend bool operator==(const DeliveryStamp &, const DeliveryStamp &) = default;
};

// postgres_changes for some members of one topic on the receiving node.
//   u8 version (2) | u64 incarnation | u64 logId | u64 seq | u64 floor | u8 flags (0x01 private)
//   | bytes tenant | bytes subTopic | bytes event | bytes payload | u32 count
//   | count x u64 member id (ascending)
// bytes = u32 length + bytes, big-endian; nothing may follow.
struct Delivery
{
    DeliveryStamp stamp;
    pubsub::TopicKey topic;
    QByteArray event;
    QByteArray payload;
    std::vector<quint64> members;
};

QByteArray encodeDelivery(const DeliveryStamp &stamp, const pubsub::TopicKey &topic,
                          QByteArrayView event, QByteArrayView payload,
                          const std::vector<quint64> &members);
Result<Delivery> decodeDelivery(QByteArrayView bytes);
// Rewrites the floor of an encoded delivery (a frame sent again states the owner's floor now).
// `frame` must come from encodeDelivery and `floor` keep 1 <= floor <= seq.
void restampFloor(QByteArray &frame, quint64 floor);

} // namespace rt::cdc::wire
