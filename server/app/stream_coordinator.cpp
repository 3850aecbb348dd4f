#include "server/app/stream_coordinator.h"

#include "server/app/logging.h"
#include "server/cdc/cdc_service.h"
#include "server/cdc/stream_wire.h"
#include "server/cluster/cluster_backend.h"
#include "server/cluster/links/node_links.h"
#include "server/pubsub/cluster_pubsub.h"
#include "server/tenants/tenant_directory.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>

namespace rt::app {

namespace {

const QString ResourcePrefix = QStringLiteral("stream/");

QByteArray claimMetadata(bool ready)
{
    return ready ? QByteArrayLiteral("{\"state\":\"ready\"}")
                 : QByteArrayLiteral("{\"state\":\"starting\"}");
}

bool isReady(const cluster::Claim &claim)
{
    const QJsonObject metadata = QJsonDocument::fromJson(claim.metadata).object();
    return metadata.value(QLatin1String("state")).toString() == QLatin1String("ready");
}

// The region of a tenant's database, as the postgres_cdc_rls extension names it (upstream's
// "region" setting); empty when it has none.
QString tenantRegion(const tenants::TenantPtr &tenant)
{
    const tenants::Extension *extension = tenant ? tenant->databaseExtension() : nullptr;
    return extension != nullptr ? extension->settings.value(QLatin1String("region")).toString()
                                : QString();
}

} // namespace

StreamCoordinator::StreamCoordinator(cluster::NodeInfo self, Parts parts, QObject *parent)
    : QObject(parent),
      m_self(std::move(self)),
      m_parts(parts),
      m_peerTenantsTimer(this)
{
    cluster::ClusterBackend *backend = &m_parts.backend;
    connect(backend, &cluster::ClusterBackend::claimGranted, this, [this](const QString &resource) {
        if (!resource.startsWith(ResourcePrefix)) {
            return;
        }
        const QByteArray tenantId = resource.mid(ResourcePrefix.size()).toUtf8();
        m_claiming.remove(tenantId);
        m_asked.remove(tenantId);
        m_mustClaim.remove(tenantId);
        qCInfo(lcApp) << "tenant" << tenantId << "change stream claimed by this node";
        m_parts.cdc.setStreamOwner(tenantId, m_self.id, false);
    });
    connect(backend, &cluster::ClusterBackend::claimRefused, this,
            [this](const QString &resource, const cluster::Claim &current) {
                if (!resource.startsWith(ResourcePrefix)) {
                    return;
                }
                const QByteArray tenantId = resource.mid(ResourcePrefix.size()).toUtf8();
                m_claiming.remove(tenantId);
                m_mustClaim.remove(tenantId);
                m_parts.cdc.setStreamOwner(tenantId, current.owner, isReady(current));
            });
    connect(backend, &cluster::ClusterBackend::claimFailed, this,
            [this](const QString &resource, const QString &reason) {
                if (!resource.startsWith(ResourcePrefix)) {
                    return;
                }
                const QByteArray tenantId = resource.mid(ResourcePrefix.size()).toUtf8();
                m_claiming.remove(tenantId);
                qCWarning(lcApp).noquote()
                        << "claiming the change stream of tenant" << QString::fromUtf8(tenantId)
                        << "failed, trying again:" << reason;
                QTimer::singleShot(1000, this, [this, tenantId] { resolve(tenantId); });
            });
    connect(backend, &cluster::ClusterBackend::claimChanged, this,
            &StreamCoordinator::onClaimChanged);
    connect(backend, &cluster::ClusterBackend::claimLost, this,
            [this](const QString &resource, const QString &reason) {
                if (!resource.startsWith(ResourcePrefix)) {
                    return;
                }
                const QByteArray tenantId = resource.mid(ResourcePrefix.size()).toUtf8();
                qCWarning(lcApp).noquote() << "lost the change stream of tenant"
                                           << QString::fromUtf8(tenantId) << "(" << reason << ")";
                m_parts.cdc.setStreamOwner(tenantId, std::nullopt, false);
                resolveSoon(tenantId);
            });
    connect(&m_parts.links, &cluster::links::NodeLinks::frameReceived, this,
            &StreamCoordinator::onFrame);
    m_peerTenantsTimer.setInterval(1000);
    connect(&m_peerTenantsTimer, &QTimer::timeout, this, &StreamCoordinator::refreshPeerTenants);
    m_peerTenantsTimer.start();
}

QString StreamCoordinator::resourceOf(const QByteArray &tenantId)
{
    return ResourcePrefix + QString::fromUtf8(tenantId);
}

void StreamCoordinator::setMembers(const QList<cluster::NodeInfo> &members)
{
    QSet<QString> now;
    for (const cluster::NodeInfo &node : members) {
        now.insert(node.id);
    }
    for (const cluster::NodeInfo &node : std::as_const(m_members)) {
        if (!now.contains(node.id)) {
            m_loads.forget(node.id);
            m_parts.cdc.nodeLeft(node.id);
        }
    }
    m_members = members;
    leaveWrongRegions();
}

void StreamCoordinator::setRegionMapping(const QHash<QString, QString> &mapping)
{
    if (mapping == m_placement.regionMapping) {
        return;
    }
    m_placement.regionMapping = mapping;
    leaveWrongRegions();
}

cluster::placement::PlacementDecision StreamCoordinator::place(const QByteArray &tenantId)
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const qint64 bucket = cluster::placement::timeBucket(now, m_placement);
    m_loads.dropBefore(bucket);
    cluster::placement::PlacementInput input;
    input.tenantId = QString::fromUtf8(tenantId);
    input.tenantRegion = tenantRegion(m_parts.tenants.find(tenantId));
    input.selfNodeId = m_self.id;
    input.selfRegion = m_self.region;
    input.epochMs = now;
    for (const cluster::NodeInfo &node : std::as_const(m_members)) {
        input.nodes.append(cluster::placement::NodeCandidate{
                node.id, node.region, m_loads.resolve(node.id, bucket, node.load) });
    }
    return cluster::placement::placeTenant(input, m_placement);
}

void StreamCoordinator::need(const QByteArray &tenantId)
{
    QMetaObject::invokeMethod(
            this,
            [this, tenantId] {
                m_needed.insert(tenantId);
                resolve(tenantId);
            },
            Qt::QueuedConnection);
}

void StreamCoordinator::resolve(const QByteArray &tenantId)
{
    if (!m_needed.contains(tenantId) || m_claiming.contains(tenantId)) {
        return;
    }
    if (const std::optional<cluster::Claim> current =
                m_parts.backend.claimOf(resourceOf(tenantId))) {
        m_parts.cdc.setStreamOwner(tenantId, current->owner, isReady(*current));
        return;
    }
    if (m_mustClaim.contains(tenantId)) {
        claim(tenantId);
        return;
    }
    const cluster::placement::PlacementDecision decision = place(tenantId);
    qCDebug(lcApp).noquote() << "placement of tenant" << QString::fromUtf8(tenantId) << "->"
                             << decision.nodeId << "("
                             << cluster::placement::toString(decision.reason) << ")";
    if (decision.nodeId.isEmpty() || decision.nodeId == m_self.id
        || !m_parts.links.isConnected(decision.nodeId)) {
        claim(tenantId);
        return;
    }
    if (m_asked.contains(tenantId)) {
        return; // its timeout claims here if the picked node does not
    }
    m_asked.insert(tenantId);
    send(decision.nodeId, cdc::wire::ControlFrameKind, tenantId,
         cdc::wire::encodeControl(cdc::wire::StartStream{ tenantId }));
    QTimer::singleShot(StartTimeoutMs, this, [this, tenantId, picked = decision.nodeId] {
        if (!m_asked.remove(tenantId) || !m_needed.contains(tenantId)
            || m_parts.backend.claimOf(resourceOf(tenantId))) {
            return;
        }
        qCInfo(lcApp).noquote() << "node" << picked << "did not start the change stream of tenant"
                                << QString::fromUtf8(tenantId) << "in time: starting it here";
        claim(tenantId);
    });
}

void StreamCoordinator::resolveSoon(const QByteArray &tenantId)
{
    // A dead owner's record and claims vanish together: let the membership catch up first so
    // that the placement does not pick the dead node.
    QTimer::singleShot(50, this, [this, tenantId] { resolve(tenantId); });
}

void StreamCoordinator::claim(const QByteArray &tenantId)
{
    if (m_claiming.contains(tenantId)) {
        return;
    }
    m_claiming.insert(tenantId);
    m_parts.backend.claim(resourceOf(tenantId), claimMetadata(false));
}

void StreamCoordinator::onClaimChanged(const QString &resource,
                                       const std::optional<cluster::Claim> &claim)
{
    if (!resource.startsWith(ResourcePrefix)) {
        return;
    }
    const QByteArray tenantId = resource.mid(ResourcePrefix.size()).toUtf8();
    if (!m_needed.contains(tenantId)) {
        return;
    }
    if (claim) {
        m_asked.remove(tenantId);
        if (claim->owner != m_self.id || !m_claiming.contains(tenantId)) {
            m_parts.cdc.setStreamOwner(tenantId, claim->owner, isReady(*claim));
        }
        return;
    }
    m_parts.cdc.setStreamOwner(tenantId, std::nullopt, false);
    resolveSoon(tenantId);
}

void StreamCoordinator::release(const QByteArray &tenantId)
{
    QMetaObject::invokeMethod(
            this,
            [this, tenantId] {
                m_needed.remove(tenantId);
                m_mustClaim.remove(tenantId);
                m_asked.remove(tenantId);
                const QString resource = resourceOf(tenantId);
                const std::optional<cluster::Claim> current = m_parts.backend.claimOf(resource);
                if (current && current->owner == m_self.id) {
                    qCInfo(lcApp) << "tenant" << tenantId
                                  << "change stream released (idle or closed here)";
                    m_parts.backend.release(resource);
                }
            },
            Qt::QueuedConnection);
}

void StreamCoordinator::streaming(const QByteArray &tenantId)
{
    QMetaObject::invokeMethod(
            this,
            [this, tenantId] {
                const QString resource = resourceOf(tenantId);
                const std::optional<cluster::Claim> current = m_parts.backend.claimOf(resource);
                if (current && current->owner == m_self.id) {
                    m_parts.backend.updateClaim(resource, claimMetadata(true));
                }
            },
            Qt::QueuedConnection);
}

void StreamCoordinator::leaveWrongRegions()
{
    // An owner outside the tenant's (mapped) region gives the stream up when that region has
    // live nodes; the nodes that need it place it again, in the right region this time.
    QSet<QString> liveRegions;
    for (const cluster::NodeInfo &node : std::as_const(m_members)) {
        liveRegions.insert(node.region);
    }
    const QList<QByteArray> owned = m_parts.cdc.ownedStreams();
    for (const QByteArray &tenantId : owned) {
        const QString region = cluster::placement::platformRegion(
                tenantRegion(m_parts.tenants.find(tenantId)), m_self.region, m_placement);
        if (region == m_self.region || !liveRegions.contains(region)) {
            continue;
        }
        qCInfo(lcApp).noquote() << "tenant" << QString::fromUtf8(tenantId) << "belongs to region"
                                << region << "- handing its change stream over";
        m_parts.backend.release(resourceOf(tenantId));
    }
}

void StreamCoordinator::refreshPeerTenants()
{
    QSet<QByteArray> held;
    const pubsub::InterestMap &interest = m_parts.pubsub.interest();
    for (const QString &peer : interest.peerIds()) {
        held.unite(interest.tenantsOf(peer));
    }
    m_parts.cdc.setTenantsHeldByPeers(std::move(held));
}

void StreamCoordinator::send(const QString &node, quint8 kind, const QByteArray &tenantId,
                             QByteArray bytes)
{
    // One ordering key per tenant: a subscriber's answer never overtakes its first changes.
    QMetaObject::invokeMethod(
            this,
            [this, node, kind, key = QString(ResourcePrefix + QString::fromUtf8(tenantId)),
             bytes = std::move(bytes)] {
                if (!m_parts.links.send(node, kind, bytes, key)) {
                    qCWarning(lcApp).noquote()
                            << "change stream message to" << node << "dropped (no link)";
                }
            },
            Qt::QueuedConnection);
}

void StreamCoordinator::sendSubscribe(const QString &owner, quint64 token,
                                      const cdc::SubscribeRequest &request)
{
    send(owner, cdc::wire::ControlFrameKind, request.topic.tenant(),
         cdc::wire::encodeControl(cdc::wire::Subscribe{ token, request }));
}

void StreamCoordinator::sendUnsubscribe(const QString &owner, const QByteArray &tenantId,
                                        quint64 memberId)
{
    send(owner, cdc::wire::ControlFrameKind, tenantId,
         cdc::wire::encodeControl(cdc::wire::Unsubscribe{ tenantId, memberId }));
}

void StreamCoordinator::sendSubscribeAnswer(const QString &node, const QByteArray &tenantId,
                                            quint64 token, const cdc::SubscribeOutcome &outcome,
                                            bool retry)
{
    // On the tenant's ordering key, like its deliveries: "Subscribed to PostgreSQL" reaches
    // the channel before its first change.
    send(node, cdc::wire::ControlFrameKind, tenantId,
         cdc::wire::encodeControl(cdc::wire::SubscribeAnswer{ token, outcome, retry }));
}

void StreamCoordinator::sendDelivery(const QString &node, const pubsub::TopicKey &topic,
                                     const QByteArray &event, const QByteArray &payload,
                                     std::vector<quint64> members)
{
    send(node, cdc::wire::DeliveryFrameKind, topic.tenant(),
         cdc::wire::encodeDelivery(topic, event, payload, members));
}

void StreamCoordinator::onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload)
{
    if (kind == cdc::wire::DeliveryFrameKind) {
        Result<cdc::wire::Delivery> delivery = cdc::wire::decodeDelivery(payload);
        if (!delivery) {
            qCWarning(lcApp).noquote()
                    << "bad change delivery from" << fromNodeId << ":" << delivery.error().message;
            return;
        }
        m_parts.cdc.remoteDelivery(std::move(delivery).value());
        return;
    }
    if (kind == cdc::wire::ControlFrameKind) {
        onControl(fromNodeId, payload);
    }
}

void StreamCoordinator::onControl(const QString &fromNodeId, const QByteArray &payload)
{
    Result<cdc::wire::ControlMessage> decoded = cdc::wire::decodeControl(payload);
    if (!decoded) {
        qCWarning(lcApp).noquote()
                << "bad change stream message from" << fromNodeId << ":" << decoded.error().message;
        return;
    }
    std::visit(
            [this, &fromNodeId](auto &message) {
                using T = std::decay_t<decltype(message)>;
                if constexpr (std::is_same_v<T, cdc::wire::StartStream>) {
                    const tenants::TenantPtr tenant = m_parts.tenants.find(message.tenantId);
                    if (!tenant || !cdc::CdcService::usesDatabase(*tenant)) {
                        send(fromNodeId, cdc::wire::ControlFrameKind, message.tenantId,
                             cdc::wire::encodeControl(cdc::wire::StartRefused{
                                     message.tenantId,
                                     QStringLiteral("no such tenant database here") }));
                        return;
                    }
                    m_mustClaim.insert(message.tenantId);
                    m_parts.cdc.openForStream(tenant); // needs it from here on: claims it
                } else if constexpr (std::is_same_v<T, cdc::wire::StartRefused>) {
                    qCInfo(lcApp).noquote()
                            << "node" << fromNodeId << "cannot run the change stream of tenant"
                            << QString::fromUtf8(message.tenantId) << "(" << message.reason
                            << "): starting it here";
                    if (m_asked.remove(message.tenantId) && m_needed.contains(message.tenantId)) {
                        claim(message.tenantId);
                    }
                } else if constexpr (std::is_same_v<T, cdc::wire::Subscribe>) {
                    const QByteArray tenantId = message.request.topic.tenant();
                    const tenants::TenantPtr tenant = m_parts.tenants.find(tenantId);
                    if (!tenant || !cdc::CdcService::usesDatabase(*tenant)) {
                        send(fromNodeId, cdc::wire::ControlFrameKind, tenantId,
                             cdc::wire::encodeControl(
                                     cdc::wire::SubscribeAnswer{ message.token, {}, true }));
                        return;
                    }
                    m_parts.cdc.remoteSubscribe(fromNodeId, tenant, message.token,
                                                std::move(message.request));
                } else if constexpr (std::is_same_v<T, cdc::wire::SubscribeAnswer>) {
                    m_parts.cdc.remoteSubscribeAnswered(message.token, message.outcome,
                                                        message.retry);
                } else {
                    m_parts.cdc.remoteUnsubscribe(fromNodeId, message.tenantId, message.memberId);
                }
            },
            decoded.value());
}

} // namespace rt::app
