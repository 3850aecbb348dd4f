#include "server/cdc/stream_deliveries.h"

#include "server/cdc/logging.h"
#include "server/cluster/links/node_links.h"

#include <QRandomGenerator>

#include <algorithm>

namespace rt::cdc {

namespace {

constexpr int TickMs = 100;
constexpr int FastResendMs = 250; // at most this often for one log on a receiver's gap report
constexpr int MaxBackoff = 3; // resendAfterMs x 8

quint64 newLogId()
{
    return QRandomGenerator::global()->generate64() | 1U; // never 0
}

} // namespace

StreamDeliveries::StreamDeliveries(cluster::links::NodeLinks &links, quint64 selfIncarnation,
                                   Settings settings, QObject *parent)
    : QObject(parent),
      m_links(links),
      m_selfIncarnation(selfIncarnation),
      m_settings(settings),
      m_timer(this)
{
    m_timer.setInterval(std::min(TickMs, m_settings.ackIntervalMs));
    connect(&m_timer, &QTimer::timeout, this, &StreamDeliveries::tick);
    m_timer.start();
}

StreamDeliveries::OutLog *StreamDeliveries::logFor(const QString &node, quint64 incarnation,
                                                   const QByteArray &tenantId)
{
    QHash<QByteArray, OutLog> &logs = m_out[node];
    auto it = logs.find(tenantId);
    if (it != logs.end() && it->incarnation > incarnation) {
        return nullptr; // for a process of that node that a later one replaced
    }
    if (it == logs.end() || it->incarnation < incarnation) {
        if (it != logs.end()) {
            m_nodeBytes[node] -= it->log.bytes();
        }
        logs.remove(tenantId);
        it = logs.insert(
                tenantId,
                OutLog{ incarnation, DeliveryLog(newLogId(), m_settings.maxLogBytes), {}, 0, {} });
    }
    return &it.value();
}

void StreamDeliveries::send(const QString &node, quint64 incarnation, const pubsub::TopicKey &topic,
                            const QByteArray &event, const QByteArray &payload,
                            const std::vector<quint64> &members)
{
    OutLog *out = logFor(node, incarnation, topic.tenant());
    if (out == nullptr) {
        return;
    }
    DeliveryLog &log = out->log;
    const quint64 seq = log.nextSeq();
    const wire::DeliveryStamp stamp{ incarnation, log.logId(), seq, std::min(log.floor(), seq) };
    QByteArray frame = wire::encodeDelivery(stamp, topic, event, payload, members);
    if (frame.size() > static_cast<qsizetype>(m_links.settings().maxFramePayloadBytes)) {
        // A frame no link can carry must not take a number: the receiver would wait for it
        // forever. Its changes are lost for that node's subscribers (as the link would drop it).
        qCWarning(lcCdc).noquote() << "a change delivery of" << frame.size() << "bytes for node"
                                   << node << "exceeds the link limit; dropped";
        return;
    }
    if (log.unacknowledged().empty()) {
        out->sinceProgress.start();
        out->backoff = 0;
    }
    const qsizetype before = log.bytes();
    const int forgotten = log.append(frame);
    m_nodeBytes[node] += log.bytes() - before;
    if (forgotten > 0) {
        qCWarning(lcCdc).noquote()
                << "deliveries of tenant" << QString::fromUtf8(topic.tenant()) << "to node" << node
                << "not acknowledged beyond" << m_settings.maxLogBytes << "bytes:" << forgotten
                << "forgotten (its subscribers miss them)";
    }
    keepNodeBound(node, topic.tenant());
    if (log.floor() > stamp.floor) {
        wire::restampFloor(frame, log.floor());
    }
    // No link (the node is away) or a full queue: the frame waits in the log for the link.
    m_links.send(node, wire::DeliveryFrameKind, frame, wire::orderingKey(topic.tenant()));
}

void StreamDeliveries::keepNodeBound(const QString &node, const QByteArray &appendedTenant)
{
    QHash<QByteArray, OutLog> &logs = m_out[node];
    qsizetype &total = m_nodeBytes[node];
    while (total > m_settings.maxNodeBytes) {
        // The largest log gives room (never the frame just appended, which is the newest).
        auto largest =
                std::max_element(logs.begin(), logs.end(), [](const OutLog &a, const OutLog &b) {
                    return a.log.bytes() < b.log.bytes();
                });
        const qsizetype before = largest->log.bytes();
        if ((largest.key() == appendedTenant && largest->log.unacknowledged().size() <= 1)
            || !largest->log.forgetOldest()) {
            return;
        }
        total -= before - largest->log.bytes();
        qCWarning(lcCdc).noquote()
                << "deliveries to node" << node << "beyond" << m_settings.maxNodeBytes
                << "bytes: one of tenant" << QString::fromUtf8(largest.key()) << "forgotten";
    }
}

void StreamDeliveries::resend(const QString &node, const QByteArray &tenantId, OutLog &out)
{
    out.sinceResend.start();
    const quint64 floor = out.log.floor();
    for (const DeliveryLog::Frame &frame : out.log.unacknowledged()) {
        QByteArray bytes = frame.bytes;
        wire::restampFloor(bytes, floor);
        if (!m_links.send(node, wire::DeliveryFrameKind, bytes, wire::orderingKey(tenantId))) {
            return; // no link or a full queue: the next occasion sends the rest
        }
    }
}

void StreamDeliveries::acknowledged(const QString &fromNode, const wire::DeliveryAck &ack)
{
    const auto logs = m_out.find(fromNode);
    if (logs == m_out.end()) {
        return;
    }
    const auto it = logs->find(ack.tenantId);
    if (it == logs->end() || it->log.logId() != ack.logId) {
        return; // a log this node no longer keeps
    }
    OutLog &out = it.value();
    const qsizetype before = out.log.bytes();
    if (out.log.acknowledge(ack.seq)) {
        m_nodeBytes[fromNode] -= before - out.log.bytes();
        out.sinceProgress.start();
        out.backoff = 0;
    }
    if (ack.gap && !out.log.unacknowledged().empty()
        && (!out.sinceResend.isValid() || out.sinceResend.elapsed() >= FastResendMs)) {
        resend(fromNode, ack.tenantId, out);
    }
}

void StreamDeliveries::peerConnected(const QString &node)
{
    const auto logs = m_out.find(node);
    if (logs == m_out.end()) {
        return;
    }
    for (auto it = logs->begin(); it != logs->end(); ++it) {
        if (!it->log.unacknowledged().empty()) {
            resend(node, it.key(), it.value());
        }
    }
}

void StreamDeliveries::forget(const QString &node, quint64 incarnation)
{
    const auto logs = m_out.find(node);
    if (logs != m_out.end()) {
        qsizetype &total = m_nodeBytes[node];
        logs->removeIf([incarnation, &total](const QHash<QByteArray, OutLog>::iterator &it) {
            if (it->incarnation > incarnation) {
                return false;
            }
            total -= it->log.bytes();
            return true;
        });
        if (logs->isEmpty()) {
            m_out.erase(logs);
            m_nodeBytes.remove(node);
        }
    }
    m_in.remove(node);
}

std::optional<wire::Delivery> StreamDeliveries::receive(const QString &fromNode,
                                                        const QByteArray &payload)
{
    Result<wire::Delivery> decoded = wire::decodeDelivery(payload);
    if (!decoded) {
        qCWarning(lcCdc).noquote()
                << "bad change delivery from" << fromNode << ":" << decoded.error().message;
        return std::nullopt;
    }
    const wire::DeliveryStamp &stamp = decoded->stamp;
    if (stamp.incarnation != m_selfIncarnation) {
        return std::nullopt; // for an earlier process of this node: its members are not ours
    }
    InOrder &in = m_in[fromNode][decoded->topic.tenant()];
    const DeliveryOrder::Outcome outcome = in.order.offer(stamp.logId, stamp.seq, stamp.floor);
    switch (outcome.verdict) {
    case DeliveryOrder::Verdict::Repeat:
        in.ackDue = true; // the owner may have missed our acknowledgement
        return std::nullopt;
    case DeliveryOrder::Verdict::Gap:
        if (!in.sinceGapAck.isValid() || in.sinceGapAck.elapsed() >= FastResendMs) {
            in.sinceGapAck.start();
            // Of the frame's log: for a log not taken from yet, "nothing up to 0".
            const quint64 have = in.order.logId() == stamp.logId ? in.order.lastSeq() : 0;
            sendAck(fromNode, decoded->topic.tenant(),
                    wire::DeliveryAck{ {}, stamp.logId, have, true });
        }
        return std::nullopt;
    case DeliveryOrder::Verdict::Take:
        break;
    }
    if (outcome.skipped > 0) {
        qCWarning(lcCdc).noquote()
                << "node" << fromNode << "forgot" << outcome.skipped << "deliveries of tenant"
                << QString::fromUtf8(decoded->topic.tenant())
                << "before this node acknowledged them";
    }
    in.ackDue = true;
    return std::move(decoded).value();
}

void StreamDeliveries::sendAck(const QString &node, const QByteArray &tenantId,
                               wire::DeliveryAck ack)
{
    ack.tenantId = tenantId;
    m_links.send(node, wire::ControlFrameKind, wire::encodeControl(ack),
                 wire::orderingKey(tenantId));
}

void StreamDeliveries::tick()
{
    for (auto node = m_in.begin(); node != m_in.end(); ++node) {
        for (auto it = node->begin(); it != node->end(); ++it) {
            if (it->ackDue) {
                it->ackDue = false;
                sendAck(node.key(), it.key(),
                        wire::DeliveryAck{ {}, it->order.logId(), it->order.lastSeq(), false });
            }
        }
    }
    for (auto node = m_out.begin(); node != m_out.end(); ++node) {
        if (!m_links.isConnected(node.key())) {
            continue; // peerConnected() sends everything once the link is back
        }
        for (auto it = node->begin(); it != node->end(); ++it) {
            OutLog &out = it.value();
            const qint64 wait = qint64{ m_settings.resendAfterMs } << out.backoff;
            if (!out.log.unacknowledged().empty() && out.sinceProgress.elapsed() >= wait) {
                out.backoff = std::min(out.backoff + 1, MaxBackoff);
                out.sinceProgress.start();
                resend(node.key(), it.key(), out);
            }
        }
    }
}

} // namespace rt::cdc
