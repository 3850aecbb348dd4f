#include "server/cdc/cdc_service.h"
#include "server/cdc/logging.h"
#include "server/cdc/stream_cluster.h"
#include "server/pubsub/local_pubsub.h"
#include "server/runtime/post.h"

#include <QLoggingCategory>
#include <QTimer>

// CdcService in a cluster: which node owns each tenant's stream, the other nodes' subscribers
// the owner serves (proxy members), their answers and deliveries. The rest of the class is in
// cdc_service.cpp.
namespace rt::cdc {

void CdcService::setClusterMode()
{
    Q_ASSERT(m_host == nullptr); // before start()
    m_clustered = true;
}

void CdcService::attachCluster(StreamCluster *cluster, const QString &selfNodeId)
{
    runtime::post(m_host, [this, cluster, selfNodeId] {
        m_cluster = cluster;
        m_selfNodeId = selfNodeId;
        for (auto it = m_databases.cbegin(); it != m_databases.cend(); ++it) {
            m_cluster->need(it.key());
        }
    });
}

void CdcService::setStreamOwner(const QByteArray &tenantId, const std::optional<QString> &owner,
                                bool ready)
{
    runtime::post(m_host,
                  [this, tenantId, owner, ready] { applyStreamOwner(tenantId, owner, ready); });
}

void CdcService::wakeStreamWaiters(Entry &entry)
{
    auto waiters = std::move(entry.streamWaiters);
    entry.streamWaiters.clear();
    for (auto &waiter : waiters) {
        waiter(true);
    }
}

void CdcService::applyStreamOwner(const QByteArray &tenantId, const std::optional<QString> &owner,
                                  bool ready)
{
    const auto it = m_databases.find(tenantId);
    if (it == m_databases.end() || !m_clustered) {
        if (owner == m_selfNodeId && m_cluster != nullptr) {
            m_cluster->release(tenantId); // granted after this node stopped needing it
        }
        return;
    }
    Entry &entry = it.value();
    const StreamRole role = !owner   ? StreamRole::Unknown
            : *owner == m_selfNodeId ? StreamRole::Owner
                                     : StreamRole::Remote;
    if (role == entry.role
        && (role != StreamRole::Remote || entry.owner == owner.value_or(QString()))) {
        if (role == StreamRole::Remote && ready && !entry.ownerReady) {
            entry.ownerReady = true;
            wakeStreamWaiters(entry);
        }
        return;
    }
    if (entry.role == StreamRole::Owner) {
        stepDown(entry);
    }
    qCInfo(lcCdc).noquote() << "tenant" << QString::fromUtf8(tenantId) << "change stream:"
                            << (role == StreamRole::Owner ? QStringLiteral("owned here")
                                        : owner           ? QStringLiteral("owned by ") + *owner
                                                          : QStringLiteral("no owner"));
    entry.role = role;
    entry.owner = role == StreamRole::Remote ? *owner : QString();
    entry.ownerReady = role == StreamRole::Remote && ready;
    // Requests sent to an earlier owner are answered by routing them again below.
    forgetSentRequests(tenantId);
    if (role == StreamRole::Owner) {
        takeOwnership(tenantId, entry);
    } else {
        followOwner(tenantId, entry);
    }
}

// Another node owns the stream now, or nobody: other nodes' pending requests are sent on (or
// keep waiting), and this node's channels register with the owner.
void CdcService::followOwner(const QByteArray &tenantId, Entry &entry)
{
    const bool remote = entry.role == StreamRole::Remote;
    auto pending = std::move(entry.pendingRemote);
    entry.pendingRemote.clear();
    for (const PendingRemoteSubscribe &request : pending) {
        if (remote) {
            m_cluster->sendSubscribeAnswer(request.fromNode, tenantId, request.token, {}, true);
        } else {
            entry.pendingRemote.push_back(request); // still nobody: keep waiting
        }
    }
    if (!remote) {
        return;
    }
    const QList<quint64> members = entry.local.keys();
    for (const quint64 memberId : members) {
        routeSubscription(tenantId, memberId);
    }
    if (entry.ownerReady) {
        wakeStreamWaiters(entry);
    }
}

void CdcService::takeOwnership(const QByteArray &tenantId, Entry &entry)
{
    {
        const QMutexLocker lock(&m_connectedMutex);
        m_owned.insert(tenantId);
    }
    TenantDatabase *db = entry.database;
    db->setStreamAllowed(true, m_settings.streamTakeoverGraceMs);
    db->connect([](const ConnectOutcome &) {}); // the stream starts once connected
    const QList<quint64> members = entry.local.keys();
    for (const quint64 memberId : members) {
        routeSubscription(tenantId, memberId);
    }
    auto pending = std::move(entry.pendingRemote);
    entry.pendingRemote.clear();
    for (PendingRemoteSubscribe &request : pending) {
        acceptRemote(tenantId, entry, std::move(request));
    }
    auto waiters = std::move(entry.streamWaiters);
    entry.streamWaiters.clear();
    for (auto &waiter : waiters) {
        db->whenStreaming([waiter = std::move(waiter)]() mutable { waiter(true); });
    }
    QPointer<TenantDatabase> alive(db);
    db->whenStreaming([this, tenantId, alive] {
        if (!alive.isNull() && alive->isStreamAllowed() && m_cluster != nullptr) {
            m_cluster->streaming(tenantId);
        }
    });
}

void CdcService::stepDown(Entry &entry)
{
    const QByteArray tenantId = entry.tenant->externalId;
    qCInfo(lcCdc) << "tenant" << tenantId << "change stream: no longer owned here";
    {
        const QMutexLocker lock(&m_connectedMutex);
        m_owned.remove(tenantId);
    }
    entry.database->setStreamAllowed(false);
    // Everyone registers again with the next owner (this node's channels included).
    for (auto it = entry.local.cbegin(); it != entry.local.cend(); ++it) {
        entry.database->unsubscribe(it.key());
    }
    QList<quint64> proxies;
    for (auto it = m_proxies.cbegin(); it != m_proxies.cend(); ++it) {
        if (it->tenantId == tenantId) {
            proxies.append(it.key());
        }
    }
    for (const quint64 proxy : std::as_const(proxies)) {
        dropProxy(proxy);
    }
}

void CdcService::openForStream(const tenants::TenantPtr &tenant)
{
    runtime::post(m_host, [this, tenant] {
        database(tenant)->connect([](const ConnectOutcome &) {});
        // database() asks only when it creates the entry; one that was already open (say, for
        // a join that is still pending) must ask again, or the stream it was picked for waits.
        if (m_cluster != nullptr) {
            m_cluster->need(tenant->externalId);
        }
    });
}

void CdcService::remoteSubscribe(const QString &fromNode, quint64 incarnation,
                                 const tenants::TenantPtr &tenant, quint64 token,
                                 SubscribeRequest request)
{
    runtime::post(
            m_host,
            [this, fromNode, incarnation, tenant, token, request = std::move(request)]() mutable {
                if (!admitIncarnation(fromNode, incarnation)) {
                    return; // from a process of that node that a later one replaced
                }
                database(tenant);
                Entry &entry = m_databases[tenant->externalId];
                acceptRemote(
                        tenant->externalId, entry,
                        PendingRemoteSubscribe{ fromNode, incarnation, token, std::move(request) });
            });
}

bool CdcService::admitIncarnation(const QString &node, quint64 incarnation)
{
    const quint64 known = m_nodeIncarnation.value(node, 0);
    if (incarnation < known) {
        return false;
    }
    if (incarnation > known) {
        if (known != 0) {
            qCInfo(lcCdc) << "node" << node << "restarted: the subscribers of its earlier process"
                          << "are dropped";
            dropNodeSubscribers(node, known);
        }
        m_nodeIncarnation.insert(node, incarnation);
    }
    return true;
}

void CdcService::acceptRemote(const QByteArray &tenantId, Entry &entry,
                              PendingRemoteSubscribe pending)
{
    switch (entry.role) {
    case StreamRole::Unknown:
        entry.pendingRemote.push_back(std::move(pending));
        return;
    case StreamRole::Standalone:
    case StreamRole::Remote:
        m_cluster->sendSubscribeAnswer(pending.fromNode, tenantId, pending.token, {}, true);
        return;
    case StreamRole::Owner:
        break;
    }
    const QString key = proxyKey(pending.fromNode, tenantId, pending.request.memberId);
    quint64 proxy = m_proxyOf.value(key);
    if (proxy == 0) {
        proxy = ProxyBit | ++m_nextProxy;
        m_proxyOf.insert(key, proxy);
        m_proxies.insert(proxy,
                         RemoteMember{ pending.fromNode, pending.incarnation, tenantId,
                                       pending.request.memberId });
    }
    pending.request.memberId = proxy;
    entry.database->subscribe(std::move(pending.request),
                              [this, node = pending.fromNode, token = pending.token, proxy,
                               tenantId](const SubscribeOutcome &outcome) {
                                  if (!outcome.ok) {
                                      dropProxy(proxy);
                                  }
                                  if (m_cluster != nullptr) {
                                      m_cluster->sendSubscribeAnswer(node, tenantId, token, outcome,
                                                                     false);
                                  }
                              });
}

void CdcService::dropProxy(quint64 proxy)
{
    const auto it = m_proxies.constFind(proxy);
    if (it == m_proxies.constEnd()) {
        return;
    }
    const RemoteMember &member = it.value();
    m_proxies.erase(it);
    m_proxyOf.remove(proxyKey(member.node, member.tenantId, member.memberId));
    const auto entry = m_databases.constFind(member.tenantId);
    if (entry != m_databases.constEnd() && entry->database != nullptr) {
        entry->database->unsubscribe(proxy);
    }
}

void CdcService::remoteUnsubscribe(const QString &fromNode, const QByteArray &tenantId,
                                   quint64 memberId)
{
    runtime::post(m_host, [this, fromNode, tenantId, memberId] {
        const auto entry = m_databases.find(tenantId);
        if (entry != m_databases.end()) {
            // Not registered yet: it must not be registered later.
            auto &pending = entry->pendingRemote;
            pending.erase(std::remove_if(pending.begin(), pending.end(),
                                         [&](const PendingRemoteSubscribe &request) {
                                             return request.fromNode == fromNode
                                                     && request.request.memberId == memberId;
                                         }),
                          pending.end());
        }
        dropProxy(m_proxyOf.value(proxyKey(fromNode, tenantId, memberId)));
    });
}

void CdcService::remoteSubscribeAnswered(quint64 token, const SubscribeOutcome &outcome, bool retry)
{
    runtime::post(m_host, [this, token, outcome, retry] {
        const auto sent = m_sent.constFind(token);
        if (sent == m_sent.constEnd()) {
            return; // routed again since (the owner changed)
        }
        const SentSubscribe &request = sent.value();
        m_sent.erase(sent);
        if (!retry) {
            answerLocal(request.tenantId, request.memberId, outcome);
            return;
        }
        // The node we asked is not the owner (any more): ask the cluster again, and route
        // again shortly in case the owner we know is right after all (it was still starting).
        if (m_cluster != nullptr) {
            m_cluster->need(request.tenantId);
        }
        QTimer::singleShot(500, m_host, [this, request] {
            const auto entry = m_databases.constFind(request.tenantId);
            if (entry != m_databases.constEnd() && entry->role == StreamRole::Remote
                && entry->owner == request.owner) {
                routeSubscription(request.tenantId, request.memberId);
            }
        });
    });
}

void CdcService::remoteDelivery(wire::Delivery delivery)
{
    runtime::post(m_host, [this, delivery = std::move(delivery)]() mutable {
        const auto entry = m_databases.constFind(delivery.topic.tenant());
        if (entry == m_databases.constEnd()) {
            return; // every subscriber of that tenant left this node
        }
        m_pubsub.publish(pubsub::OutboundMessage::pushTo(
                delivery.topic, std::move(delivery.event), std::move(delivery.payload),
                std::move(delivery.members), entry->counting));
    });
}

void CdcService::publishSplit(const pubsub::OutboundMessagePtr &message) const
{
    std::vector<quint64> local;
    // A node's proxies are all of one process (admitIncarnation drops an earlier one's).
    QHash<QString, std::pair<quint64, std::vector<quint64>>> remote;
    for (const quint64 member : message->members()) {
        if ((member & ProxyBit) == 0) {
            local.push_back(member);
        } else if (const auto it = m_proxies.constFind(member); it != m_proxies.constEnd()) {
            auto &[incarnation, members] = remote[it->node];
            incarnation = it->incarnation;
            members.push_back(it->memberId);
        }
    }
    if (!local.empty()) {
        m_pubsub.publish(pubsub::OutboundMessage::pushTo(message->topic(), message->event(),
                                                         message->payload(), std::move(local),
                                                         message->counting()));
    }
    if (m_cluster == nullptr) {
        return;
    }
    for (auto it = remote.begin(); it != remote.end(); ++it) {
        auto &[incarnation, members] = it.value();
        std::sort(members.begin(), members.end());
        m_cluster->sendDelivery(it.key(), incarnation, message->topic(), message->event(),
                                message->payload(), std::move(members));
    }
}

void CdcService::nodeGone(const QString &nodeId, quint64 incarnation)
{
    runtime::post(m_host, [this, nodeId, incarnation] {
        dropNodeSubscribers(nodeId, incarnation);
        if (m_nodeIncarnation.value(nodeId, 0) <= incarnation) {
            m_nodeIncarnation.remove(nodeId);
        }
    });
}

void CdcService::dropNodeSubscribers(const QString &nodeId, quint64 upToIncarnation)
{
    QList<quint64> proxies;
    for (auto it = m_proxies.cbegin(); it != m_proxies.cend(); ++it) {
        if (it->node == nodeId && it->incarnation <= upToIncarnation) {
            proxies.append(it.key());
        }
    }
    for (const quint64 proxy : std::as_const(proxies)) {
        dropProxy(proxy);
    }
    for (Entry &entry : m_databases) {
        auto &pending = entry.pendingRemote;
        pending.erase(std::remove_if(pending.begin(), pending.end(),
                                     [&](const PendingRemoteSubscribe &request) {
                                         return request.fromNode == nodeId
                                                 && request.incarnation <= upToIncarnation;
                                     }),
                      pending.end());
    }
}

void CdcService::forgetSentRequests(const QByteArray &tenantId)
{
    for (auto sent = m_sent.begin(); sent != m_sent.end();) {
        sent = sent->tenantId == tenantId ? m_sent.erase(sent) : std::next(sent);
    }
}

void CdcService::nodeReachable(const QString &nodeId)
{
    runtime::post(m_host, [this, nodeId] {
        for (auto entry = m_databases.begin(); entry != m_databases.end(); ++entry) {
            if (entry->role != StreamRole::Remote || entry->owner != nodeId) {
                continue;
            }
            const QByteArray &tenantId = entry.key();
            // Answers to what was sent before the link went down are stale (or never come).
            forgetSentRequests(tenantId);
            const QList<quint64> members = entry->local.keys();
            for (const quint64 memberId : members) {
                routeSubscription(tenantId, memberId);
            }
        }
    });
}

void CdcService::setTenantsHeldByPeers(QSet<QByteArray> tenants)
{
    runtime::post(m_host, [this, tenants = std::move(tenants)]() mutable {
        m_heldByPeers = std::move(tenants);
    });
}

} // namespace rt::cdc
