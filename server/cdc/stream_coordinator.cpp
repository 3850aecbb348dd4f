#include "server/cdc/stream_coordinator.h"

#include "server/cdc/cdc_service.h"
#include "server/cdc/logging.h"
#include "server/cdc/stream_wire.h"
#include "server/cluster/cluster_backend.h"
#include "server/cluster/links/node_links.h"
#include "server/metrics/catalog.h"
#include "server/pubsub/cluster_pubsub.h"
#include "server/tenants/tenant_directory.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>

namespace rt::cdc {

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
      m_parts(std::move(parts)),
      m_peerTenantsTimer(this),
      m_deliveries(m_parts.links, incarnationOf(m_self), StreamDeliveries::Settings{}, this),
      m_mailbox(std::make_shared<runtime::Mailbox>(this))
{
    connectBackend();
    connect(&m_parts.links, &cluster::links::NodeLinks::frameReceived, this,
            &StreamCoordinator::onFrame);
    connect(&m_parts.links, &cluster::links::NodeLinks::peerConnected, this,
            [this](const QString &nodeId) {
                m_deliveries.peerConnected(nodeId);
                m_parts.cdc.nodeReachable(nodeId);
            });
    m_peerTenantsTimer.setInterval(1000);
    connect(&m_peerTenantsTimer, &QTimer::timeout, this, [this] {
        refreshPeerTenants();
        forgetAbsentNodes();
    });
    m_peerTenantsTimer.start();
    m_clock.start();
}

quint64 StreamCoordinator::incarnationOf(const cluster::NodeInfo &node)
{
    return static_cast<quint64>(node.startedAtMs);
}

StreamCoordinator::~StreamCoordinator()
{
    m_mailbox->close();
}

void StreamCoordinator::connectBackend()
{
    cluster::ClusterBackend *backend = &m_parts.backend;
    connect(backend, &cluster::ClusterBackend::claimGranted, this, [this](const QString &resource) {
        if (resource.startsWith(ResourcePrefix)) {
            onClaimGranted(resource.mid(ResourcePrefix.size()).toUtf8());
        }
    });
    connect(backend, &cluster::ClusterBackend::claimRefused, this,
            [this](const QString &resource, const cluster::Claim &current) {
                if (!resource.startsWith(ResourcePrefix)) {
                    return;
                }
                const QByteArray tenantId = resource.mid(ResourcePrefix.size()).toUtf8();
                m_claiming.remove(tenantId);
                m_mustClaim.remove(tenantId);
                tellOwner(tenantId, current.owner, isReady(current));
            });
    connect(backend, &cluster::ClusterBackend::claimFailed, this,
            [this](const QString &resource, const QString &reason) {
                if (!resource.startsWith(ResourcePrefix)) {
                    return;
                }
                const QByteArray tenantId = resource.mid(ResourcePrefix.size()).toUtf8();
                m_claiming.remove(tenantId);
                qCWarning(lcCdc).noquote()
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
                qCWarning(lcCdc).noquote() << "lost the change stream of tenant"
                                           << QString::fromUtf8(tenantId) << "(" << reason << ")";
                tellOwner(tenantId, std::nullopt, false);
                resolveSoon(tenantId);
            });
}

void StreamCoordinator::onClaimGranted(const QByteArray &tenantId)
{
    const auto claiming = m_claiming.constFind(tenantId);
    if (claiming != m_claiming.constEnd()) {
        const ClaimCause cause = claiming.value();
        m_claiming.erase(claiming);
        qCInfo(lcCdc).noquote() << QStringLiteral(
                                           "tenant %1 change stream claimed by this node (%2)")
                                           .arg(QString::fromUtf8(tenantId),
                                                QLatin1String(label(cause)));
        if (m_parts.metrics != nullptr) {
            m_parts.metrics->streamClaims.labels({ label(cause) })->inc();
        }
    }
    m_asked.remove(tenantId);
    m_mustClaim.remove(tenantId);
    if (m_homeOnly.contains(tenantId)) {
        // No stream to start: the claim only names the tenant's home, ready at once.
        m_homeSinceMs.insert(tenantId, m_clock.elapsed());
        m_parts.backend.updateClaim(resourceOf(tenantId), claimMetadata(true));
        return;
    }
    tellOwner(tenantId, m_self.id, false);
}

void StreamCoordinator::tellOwner(const QByteArray &tenantId, const std::optional<QString> &owner,
                                  bool ready)
{
    if (!m_homeOnly.contains(tenantId)) {
        m_parts.cdc.setStreamOwner(tenantId, owner, ready);
    }
}

bool StreamCoordinator::wantsHome(const QByteArray &tenantId, const QSet<QByteArray> &local,
                                  const QSet<QByteArray> &heldByPeers) const
{
    if (local.contains(tenantId) || m_claiming.contains(tenantId)
        || m_mustClaim.contains(tenantId)) {
        return true;
    }
    const std::optional<cluster::Claim> claim = heldClaim(tenantId);
    if (!claim || claim->owner != m_self.id) {
        return false;
    }
    // The home stays while any node holds clients of the tenant (and for a grace after the
    // claim: the node that asked for it may not have announced its clients yet).
    return heldByPeers.contains(tenantId)
            || m_clock.elapsed() - m_homeSinceMs.value(tenantId) < HomeGraceMs;
}

void StreamCoordinator::setLocalTenants(const QSet<QByteArray> &local)
{
    QSet<QByteArray> heldByPeers;
    const pubsub::InterestMap &interest = m_parts.pubsub.interest();
    for (const QString &peer : interest.peerIds()) {
        heldByPeers.unite(interest.tenantsOf(peer));
    }
    QSet<QByteArray> candidates = m_homeOnly;
    for (const QByteArray &tenantId : local) {
        const tenants::TenantPtr tenant = m_parts.tenants.find(tenantId);
        if (tenant && !cdc::CdcService::usesDatabase(*tenant)) {
            candidates.insert(tenantId);
        }
    }
    for (const QByteArray &tenantId : std::as_const(candidates)) {
        const bool wanted = wantsHome(tenantId, local, heldByPeers);
        if (wanted && !m_homeOnly.contains(tenantId)) {
            m_homeOnly.insert(tenantId);
            m_needed.insert(tenantId);
            resolve(tenantId);
        } else if (!wanted && m_homeOnly.contains(tenantId)) {
            m_homeOnly.remove(tenantId);
            m_homeSinceMs.remove(tenantId);
            m_needed.remove(tenantId);
            m_asked.remove(tenantId);
            const std::optional<cluster::Claim> claim = heldClaim(tenantId);
            if (claim && claim->owner == m_self.id) {
                qCInfo(lcCdc) << "tenant" << tenantId << "home released (no clients left)";
                m_parts.backend.release(resourceOf(tenantId));
            }
        }
    }
}

std::optional<cluster::Claim> StreamCoordinator::heldClaim(const QByteArray &tenantId) const
{
    const QString resource = resourceOf(tenantId);
    std::optional<cluster::Claim> claim = m_parts.backend.claimOf(resource);
    // The backend's view keeps a claim of ours that it lost (its lease expired while etcd was
    // out of reach) until etcd shows what became of it. Taking that for ownership made a
    // cut-off node start the stream again and, once it reached the database, take the slot
    // from the real owner; the stream's changes then went to no other node's subscribers.
    if (claim && claim->owner == m_self.id && !m_parts.backend.ownedClaims().contains(resource)) {
        return std::nullopt;
    }
    return claim;
}

QString StreamCoordinator::resourceOf(const QByteArray &tenantId)
{
    return ResourcePrefix + QString::fromUtf8(tenantId);
}

void StreamCoordinator::setMembers(const QList<cluster::NodeInfo> &members)
{
    QHash<QString, quint64> now;
    for (const cluster::NodeInfo &node : members) {
        now.insert(node.id, incarnationOf(node));
    }
    for (const cluster::NodeInfo &node : std::as_const(m_members)) {
        const quint64 incarnation = incarnationOf(node);
        const auto present = now.constFind(node.id);
        if (present == now.constEnd()) {
            // Gone from the membership, perhaps only cut off: its subscribers stay registered
            // and their changes wait in the delivery logs for AbsentNodeHoldMs.
            m_loads.forget(node.id);
            m_absent.insert(node.id, Absent{ incarnation, QDateTime::currentMSecsSinceEpoch() });
        } else if (present.value() != incarnation) {
            forgetNode(node.id, incarnation); // restarted: its earlier process's members are gone
        }
    }
    for (auto it = now.cbegin(); it != now.cend(); ++it) {
        const auto absent = m_absent.constFind(it.key());
        if (absent != m_absent.constEnd()) {
            const quint64 heldIncarnation = absent->incarnation;
            m_absent.erase(absent);
            if (heldIncarnation != it.value()) {
                forgetNode(it.key(), heldIncarnation);
            }
        }
    }
    m_members = members;
    leaveWrongRegions();
}

void StreamCoordinator::forgetNode(const QString &nodeId, quint64 incarnation)
{
    m_parts.cdc.nodeGone(nodeId, incarnation);
    m_deliveries.forget(nodeId, incarnation);
}

void StreamCoordinator::forgetAbsentNodes()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    for (auto it = m_absent.begin(); it != m_absent.end();) {
        if (now - it->sinceMs < AbsentNodeHoldMs) {
            ++it;
            continue;
        }
        qCInfo(lcCdc).noquote() << "node" << it.key() << "away for" << AbsentNodeHoldMs
                                << "ms: its change subscribers are dropped";
        forgetNode(it.key(), it->incarnation);
        it = m_absent.erase(it);
    }
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
    if (const std::optional<cluster::Claim> current = heldClaim(tenantId)) {
        tellOwner(tenantId, current->owner, isReady(*current));
        return;
    }
    if (m_mustClaim.contains(tenantId)) {
        claim(tenantId, ClaimCause::AskedByPeer);
        return;
    }
    if (m_asked.contains(tenantId)) {
        return; // the picked node's claim, its refusal or the timeout decides
    }
    const cluster::placement::PlacementDecision decision = place(tenantId);
    const bool here = decision.nodeId.isEmpty() || decision.nodeId == m_self.id;
    qCInfo(lcCdc).noquote()
            << QStringLiteral("placement of tenant %1: %2 (%3; candidates %4)")
                       .arg(QString::fromUtf8(tenantId), here ? m_self.id : decision.nodeId,
                            QLatin1String(cluster::placement::toString(decision.reason)),
                            decision.candidates.isEmpty()
                                    ? QStringLiteral("none")
                                    : decision.candidates.join(QStringLiteral(", ")));
    if (m_parts.metrics != nullptr) {
        m_parts.metrics->streamPlacements
                .labels({ cluster::placement::toString(decision.reason), here ? "self" : "peer" })
                ->inc();
    }
    if (here) {
        claim(tenantId, ClaimCause::PlacedHere);
        return;
    }
    askToStart(tenantId, decision.nodeId);
}

void StreamCoordinator::askToStart(const QByteArray &tenantId, const QString &picked)
{
    // A link that is still coming up queues the request: the timeout, not the link's state at
    // this instant, decides whether the picked node failed to start the stream.
    if (!m_parts.links.send(picked, cdc::wire::ControlFrameKind,
                            cdc::wire::encodeControl(cdc::wire::StartStream{ tenantId }),
                            resourceOf(tenantId))) {
        fallBack(tenantId, FallbackReason::Unreachable,
                 QStringLiteral("node %1 cannot be reached").arg(picked));
        return;
    }
    const quint64 serial = ++m_askSerial;
    m_asked.insert(tenantId, Ask{ picked, serial });
    QTimer::singleShot(StartTimeoutMs, this, [this, tenantId, picked, serial] {
        const auto ask = m_asked.constFind(tenantId);
        if (ask == m_asked.constEnd() || ask->serial != serial) {
            return;
        }
        m_asked.erase(ask);
        if (!m_needed.contains(tenantId) || m_parts.backend.claimOf(resourceOf(tenantId))) {
            return;
        }
        fallBack(tenantId, FallbackReason::Timeout,
                 QStringLiteral("node %1 did not start it within %2 ms")
                         .arg(picked)
                         .arg(StartTimeoutMs));
    });
}

void StreamCoordinator::fallBack(const QByteArray &tenantId, FallbackReason reason,
                                 const QString &why)
{
    qCInfo(lcCdc).noquote() << QStringLiteral(
                                       "change stream of tenant %1: %2; starting it here (%3)")
                                       .arg(QString::fromUtf8(tenantId), why,
                                            QLatin1String(label(reason)));
    if (m_parts.metrics != nullptr) {
        m_parts.metrics->streamPlacementFallbacks.labels({ label(reason) })->inc();
    }
    claim(tenantId, ClaimCause::Fallback);
}

void StreamCoordinator::resolveSoon(const QByteArray &tenantId)
{
    // A dead owner's record and claims vanish together: let the membership catch up first so
    // that the placement does not pick the dead node.
    QTimer::singleShot(50, this, [this, tenantId] { resolve(tenantId); });
}

void StreamCoordinator::claim(const QByteArray &tenantId, ClaimCause cause)
{
    if (m_claiming.contains(tenantId)) {
        return;
    }
    m_claiming.insert(tenantId, cause);
    m_parts.backend.claim(resourceOf(tenantId), claimMetadata(false));
}

void StreamCoordinator::startRequested(const QString &fromNodeId, const QByteArray &tenantId,
                                       bool reread)
{
    const tenants::TenantPtr tenant = m_parts.tenants.find(tenantId);
    if (tenant && cdc::CdcService::usesDatabase(*tenant)) {
        qCInfo(lcCdc).noquote() << "node" << fromNodeId
                                << "asks this node to run the change stream of tenant"
                                << QString::fromUtf8(tenantId);
        m_mustClaim.insert(tenantId);
        m_parts.cdc.openForStream(tenant); // needs it from here on: claims it
        return;
    }
    if (tenant) {
        qCInfo(lcCdc).noquote() << "node" << fromNodeId << "asks this node to be the home of tenant"
                                << QString::fromUtf8(tenantId);
        m_mustClaim.insert(tenantId);
        m_homeOnly.insert(tenantId);
        m_needed.insert(tenantId);
        resolve(tenantId);
        return;
    }
    if (!reread && m_parts.refreshTenant) {
        // Created or changed through another node since this node last read the control plane
        // (it re-reads all tenants only every TENANT_CACHE_EXPIRATION_IN_MS): ask it now.
        m_parts.refreshTenant(tenantId, [mailbox = m_mailbox, this, fromNodeId, tenantId] {
            mailbox->post(
                    [this, fromNodeId, tenantId] { startRequested(fromNodeId, tenantId, true); });
        });
        return;
    }
    qCInfo(lcCdc).noquote() << "node" << fromNodeId << "asks for the change stream of tenant"
                            << QString::fromUtf8(tenantId) << "- refused: no such tenant database";
    send(fromNodeId, cdc::wire::ControlFrameKind, tenantId,
         cdc::wire::encodeControl(cdc::wire::StartRefused{
                 tenantId, QStringLiteral("no such tenant database here") }));
}

const char *StreamCoordinator::label(ClaimCause cause)
{
    switch (cause) {
    case ClaimCause::PlacedHere:
        return "placed_here";
    case ClaimCause::AskedByPeer:
        return "asked_by_peer";
    case ClaimCause::Fallback:
        break;
    }
    return "fallback";
}

const char *StreamCoordinator::label(FallbackReason reason)
{
    switch (reason) {
    case FallbackReason::Refused:
        return "refused";
    case FallbackReason::Timeout:
        return "timeout";
    case FallbackReason::Unreachable:
        break;
    }
    return "unreachable";
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
            tellOwner(tenantId, claim->owner, isReady(*claim));
        }
        return;
    }
    tellOwner(tenantId, std::nullopt, false);
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
                    qCInfo(lcCdc) << "tenant" << tenantId
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
        qCInfo(lcCdc).noquote() << "tenant" << QString::fromUtf8(tenantId) << "belongs to region"
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
    QMetaObject::invokeMethod(
            this,
            [this, node, kind, key = cdc::wire::orderingKey(tenantId), bytes = std::move(bytes)] {
                if (!m_parts.links.send(node, kind, bytes, key)) {
                    qCWarning(lcCdc).noquote()
                            << "change stream message to" << node << "dropped (no link)";
                }
            },
            Qt::QueuedConnection);
}

void StreamCoordinator::sendSubscribe(const QString &owner, quint64 token,
                                      const cdc::SubscribeRequest &request)
{
    send(owner, cdc::wire::ControlFrameKind, request.topic.tenant(),
         cdc::wire::encodeControl(cdc::wire::Subscribe{ token, request, incarnationOf(m_self) }));
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

void StreamCoordinator::sendDelivery(const QString &node, quint64 incarnation,
                                     const pubsub::TopicKey &topic, const QByteArray &event,
                                     const QByteArray &payload, std::vector<quint64> members)
{
    QMetaObject::invokeMethod(
            this,
            [this, node, incarnation, topic, event, payload, members = std::move(members)] {
                m_deliveries.send(node, incarnation, topic, event, payload, members);
            },
            Qt::QueuedConnection);
}

void StreamCoordinator::onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload)
{
    if (kind == cdc::wire::DeliveryFrameKind) {
        if (std::optional<cdc::wire::Delivery> delivery =
                    m_deliveries.receive(fromNodeId, payload)) {
            m_parts.cdc.remoteDelivery(std::move(*delivery));
        }
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
        qCWarning(lcCdc).noquote()
                << "bad change stream message from" << fromNodeId << ":" << decoded.error().message;
        return;
    }
    std::visit(
            [this, &fromNodeId](auto &message) {
                using T = std::decay_t<decltype(message)>;
                if constexpr (std::is_same_v<T, cdc::wire::StartStream>) {
                    startRequested(fromNodeId, message.tenantId, false);
                } else if constexpr (std::is_same_v<T, cdc::wire::StartRefused>) {
                    const auto ask = m_asked.constFind(message.tenantId);
                    if (ask == m_asked.constEnd() || ask->node != fromNodeId) {
                        return; // not (or no longer) waiting for that node
                    }
                    m_asked.erase(ask);
                    if (m_needed.contains(message.tenantId)) {
                        fallBack(message.tenantId, FallbackReason::Refused,
                                 QStringLiteral("node %1 cannot run it (%2)")
                                         .arg(fromNodeId, message.reason));
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
                    m_parts.cdc.remoteSubscribe(fromNodeId, message.incarnation, tenant,
                                                message.token, std::move(message.request));
                } else if constexpr (std::is_same_v<T, cdc::wire::SubscribeAnswer>) {
                    m_parts.cdc.remoteSubscribeAnswered(message.token, message.outcome,
                                                        message.retry);
                } else if constexpr (std::is_same_v<T, cdc::wire::Unsubscribe>) {
                    m_parts.cdc.remoteUnsubscribe(fromNodeId, message.tenantId, message.memberId);
                } else {
                    m_deliveries.acknowledged(fromNodeId, message);
                }
            },
            decoded.value());
}

} // namespace rt::cdc
