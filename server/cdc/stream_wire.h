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

using ControlMessage =
        std::variant<StartStream, StartRefused, Subscribe, SubscribeAnswer, Unsubscribe>;

QByteArray encodeControl(const ControlMessage &message);
Result<ControlMessage> decodeControl(QByteArrayView bytes);

// postgres_changes for some members of one topic on the receiving node.
//   u8 version (1) | u8 flags (0x01 private) | bytes tenant | bytes subTopic | bytes event
//   | bytes payload | u32 count | count x u64 member id (ascending)
// bytes = u32 length + bytes, big-endian; nothing may follow.
struct Delivery
{
    pubsub::TopicKey topic;
    QByteArray event;
    QByteArray payload;
    std::vector<quint64> members;
};

QByteArray encodeDelivery(const pubsub::TopicKey &topic, QByteArrayView event,
                          QByteArrayView payload, const std::vector<quint64> &members);
Result<Delivery> decodeDelivery(QByteArrayView bytes);

} // namespace rt::cdc::wire
