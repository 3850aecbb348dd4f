#pragma once

#include "server/cdc/delivery_sequence.h"
#include "server/cdc/stream_wire.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QTimer>

#include <optional>

namespace rt::cluster::links {
class NodeLinks;
}

namespace rt::cdc {

// Change deliveries between nodes that survive broken links and a peer's absence from the
// membership (delivery_sequence.h has the rules). As the owner it stamps and keeps every
// delivery until the receiver acknowledges it, and sends what is unacknowledged again when a
// link to the receiver comes up, when the receiver reports a gap, and when acknowledgements
// stop for a while; as the receiver it passes on frames in log order, once each, and
// acknowledges them. Memory: at most maxLogBytes per (node, tenant) and maxNodeBytes per node.
// Lives on the cluster thread with the NodeLinks.
class StreamDeliveries : public QObject
{
    Q_OBJECT

public:
    struct Settings
    {
        qsizetype maxLogBytes = qsizetype{ 16 } * 1024 * 1024;
        qsizetype maxNodeBytes = qsizetype{ 64 } * 1024 * 1024;
        int ackIntervalMs = 100;
        // Unacknowledged frames and no acknowledgement for this long (doubling up to 8 times
        // as long while it goes on): send them again.
        int resendAfterMs = 2000;
    };

    StreamDeliveries(cluster::links::NodeLinks &links, quint64 selfIncarnation, Settings settings,
                     QObject *parent = nullptr);

    // Owner: sends one delivery to `node`'s process `incarnation` (a later incarnation starts a
    // new log; frames for an earlier one are dropped).
    void send(const QString &node, quint64 incarnation, const pubsub::TopicKey &topic,
              const QByteArray &event, const QByteArray &payload,
              const std::vector<quint64> &members);
    void acknowledged(const QString &fromNode, const wire::DeliveryAck &ack);
    void peerConnected(const QString &node);
    // Forgets the logs kept for `node`'s processes up to `incarnation` (it left for good or
    // restarted), and what it sent this node.
    void forget(const QString &node, quint64 incarnation);

    // Receiver: the delivery to pass on, or nullopt (malformed, meant for another process of
    // this node, a repeat, or after a gap).
    std::optional<wire::Delivery> receive(const QString &fromNode, const QByteArray &payload);

private:
    struct OutLog
    {
        quint64 incarnation = 0;
        DeliveryLog log;
        QElapsedTimer sinceProgress; // last acknowledgement (or the first unacknowledged frame)
        int backoff = 0;
        QElapsedTimer sinceResend;
    };
    struct InOrder
    {
        DeliveryOrder order;
        bool ackDue = false;
        QElapsedTimer sinceGapAck;
    };

    // The log of `node`'s process `incarnation` for the tenant (a new one for a later process);
    // nullptr for an earlier process.
    OutLog *logFor(const QString &node, quint64 incarnation, const QByteArray &tenantId);
    void resend(const QString &node, const QByteArray &tenantId, OutLog &out);

    void keepNodeBound(const QString &node, const QByteArray &appendedTenant);
    void tick();
    void sendAck(const QString &node, const QByteArray &tenantId, wire::DeliveryAck ack);

    cluster::links::NodeLinks &m_links;
    quint64 m_selfIncarnation;
    Settings m_settings;
    QHash<QString, QHash<QByteArray, OutLog>> m_out; // node -> tenant -> log
    // node -> the bytes its logs keep (what keepNodeBound() checks on every delivery).
    QHash<QString, qsizetype> m_nodeBytes;
    QHash<QString, QHash<QByteArray, InOrder>> m_in; // sender -> tenant -> order
    QTimer m_timer;
};

} // namespace rt::cdc
