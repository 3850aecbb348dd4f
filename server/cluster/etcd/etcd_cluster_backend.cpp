#include "server/cluster/etcd/etcd_cluster_backend.h"

#include "server/cluster/logging.h"

#include <QDateTime>
#include <QMetaObject>

#include <algorithm>
#include <iterator>

namespace rt::cluster {

using namespace rt::cluster::etcd;

namespace {

const QByteArray NodesDir = QByteArrayLiteral("nodes/");
const QByteArray ClaimsDir = QByteArrayLiteral("claims/");
const QByteArray ConfigDir = QByteArrayLiteral("config/");

} // namespace

EtcdClusterBackend::EtcdClusterBackend(EtcdBackendSettings settings, QObject *parent)
    : ClusterBackend(parent),
      m_settings(std::move(settings))
{
    QString prefix = m_settings.prefix;
    while (prefix.endsWith(QLatin1Char('/'))) {
        prefix.chop(1);
    }
    m_root = prefix.toUtf8() + '/';
    m_settings.leaseTtlSeconds = std::max(1, m_settings.leaseTtlSeconds);
    m_client = std::make_unique<EtcdClient>(m_settings.endpoints, m_settings.security);
    m_client->setRequestTimeoutMs(m_settings.requestTimeoutMs);
    // Keepalive at TTL/3: two may be lost before the lease expires.
    m_tick.setInterval(std::max(100, m_settings.leaseTtlSeconds * 1000 / 3));
    connect(&m_tick, &QTimer::timeout, this, &EtcdClusterBackend::tick);
}

EtcdClusterBackend::~EtcdClusterBackend()
{
    // The watch and the client drop their pending callbacks (which point at this object) before
    // the caches they update go away. The lease is left to expire.
    m_tick.stop();
    m_watch.reset();
    m_client.reset();
}

QByteArray EtcdClusterBackend::nodeKey(const QString &id) const
{
    return m_root + NodesDir + id.toUtf8();
}

QByteArray EtcdClusterBackend::claimKey(const QString &resource) const
{
    return m_root + ClaimsDir + resource.toUtf8();
}

QByteArray EtcdClusterBackend::configKey(const QString &key) const
{
    return m_root + ConfigDir + key.toUtf8();
}

void EtcdClusterBackend::later(std::function<void()> call)
{
    QMetaObject::invokeMethod(this, std::move(call), Qt::QueuedConnection);
}

// --- lifecycle ------------------------------------------------------------------------------

void EtcdClusterBackend::start(const NodeInfo &self)
{
    Q_ASSERT(!m_started);
    m_started = true;
    m_self = self;
    m_tick.start();
    registerSelf();
}

void EtcdClusterBackend::stop()
{
    if (!m_started || m_stopping) {
        later([this] { Q_EMIT stopped(); });
        return;
    }
    m_stopping = true;
    m_tick.stop();
    if (m_watch) {
        m_watch->stop();
    }
    m_owned.clear();
    m_registered = false;
    ++m_generation;
    const qint64 lease = std::exchange(m_lease, 0);
    if (lease == 0) {
        later([this] { Q_EMIT stopped(); });
        return;
    }
    // Revoking deletes the node record and every claim at once; peers see them go now rather
    // than after the TTL.
    m_client->leaseRevoke(lease, [this](const EtcdResult<qint64> &result) {
        if (!result) {
            qCWarning(lcCluster).noquote()
                    << "etcd: could not revoke the lease on stop (it will expire):"
                    << result.error().message;
        }
        Q_EMIT stopped();
    });
}

void EtcdClusterBackend::updateSelf(const NodeInfo &self)
{
    Q_ASSERT(self.id == m_self.id);
    m_self = self;
    if (!m_registered || m_lease == 0) {
        return; // registration publishes the latest record
    }
    const quint64 generation = m_generation;
    m_client->put(nodeKey(m_self.id), m_self.toJsonBytes(), m_lease,
                  [this, generation](const EtcdResult<PutResponse> &result) {
                      if (generation != m_generation || result) {
                          return;
                      }
                      if (result.error().isNotFound()) {
                          leaseLost(result.error().message);
                      } else {
                          failed(result.error(), QStringLiteral("publishing this node's record"));
                      }
                  });
}

void EtcdClusterBackend::tick()
{
    if (!m_started || m_stopping || m_keepAliveSuspended) {
        return;
    }
    if (m_lease != 0 && !m_owned.isEmpty() && m_sinceKeepAlive.isValid()
        && m_sinceKeepAlive.elapsed() > qint64(m_settings.leaseTtlSeconds) * 1000) {
        // The lease may have expired by now and another node may own these resources.
        loseAllClaims(QStringLiteral("no keepalive answer for longer than the lease TTL"));
    }
    if (!m_registered) {
        if (!m_registering) {
            registerSelf();
        }
        return;
    }
    if (!m_loaded && !m_loading) {
        loadState();
    }
    keepAlive();
}

void EtcdClusterBackend::registerSelf()
{
    if (m_registering || m_stopping || m_keepAliveSuspended) {
        return;
    }
    m_registering = true;
    const quint64 generation = m_generation;
    auto publish = [this, generation] {
        m_client->put(nodeKey(m_self.id), m_self.toJsonBytes(), m_lease,
                      [this, generation](EtcdResult<PutResponse> result) {
                          if (generation != m_generation) {
                              return;
                          }
                          m_registering = false;
                          if (!result) {
                              if (result.error().isNotFound()) {
                                  leaseLost(result.error().message);
                              } else {
                                  failed(result.error(), QStringLiteral("registering this node"));
                              }
                              return;
                          }
                          qCInfo(lcCluster).noquote() << "etcd: node" << m_self.id
                                                      << "registered with lease" << m_lease;
                          m_registered = true;
                          m_revision = std::max(m_revision, result->revision);
                          releaseOrphanedClaims();
                          if (!m_loaded && !m_loading) {
                              loadState();
                          } else {
                              updateAvailability(QString());
                          }
                      });
    };
    if (m_lease != 0) {
        publish();
        return;
    }
    m_client->leaseGrant(m_settings.leaseTtlSeconds,
                         [this, generation, publish](EtcdResult<LeaseGrantResponse> result) {
                             if (generation != m_generation) {
                                 return;
                             }
                             if (!result) {
                                 m_registering = false;
                                 failed(result.error(), QStringLiteral("granting a lease"));
                                 return;
                             }
                             m_lease = result->id;
                             m_leaseHealthy = true;
                             m_sinceKeepAlive.start();
                             publish();
                         });
}

void EtcdClusterBackend::loadState()
{
    m_loading = true;
    m_client->range(m_root, rangeEndForPrefix(m_root), [this](EtcdResult<RangeResponse> result) {
        if (m_stopping) {
            return;
        }
        m_loading = false;
        if (!result) {
            failed(result.error(), QStringLiteral("reading the cluster state"));
            return;
        }
        applyRange(*result);
        m_loaded = true;
        startWatch(result->revision + 1);
    });
}

void EtcdClusterBackend::startWatch(qint64 fromRevision)
{
    if (m_watch) {
        // May run inside one of the old watch's signals: let it unwind first.
        m_watch->stop();
        m_watch.release()->deleteLater();
    }
    m_watch =
            std::make_unique<EtcdWatch>(*m_client, m_root, rangeEndForPrefix(m_root), fromRevision);
    EtcdWatch *watch = m_watch.get();
    connect(watch, &EtcdWatch::established, this, [this] {
        qCDebug(lcCluster) << "etcd: watch established at revision" << m_watch->nextRevision();
        updateAvailability(QString());
    });
    connect(watch, &EtcdWatch::eventsReceived, this, &EtcdClusterBackend::onWatchEvents);
    connect(watch, &EtcdWatch::interrupted, this, [this](const QString &reason) {
        updateAvailability(QStringLiteral("etcd watch interrupted: ") + reason);
    });
    connect(watch, &EtcdWatch::compacted, this, [this](qint64) {
        // Changes between our revision and the compaction are gone: read everything again
        // (applyRange reports the differences) and watch from there.
        m_loaded = false;
        if (!m_loading && !m_stopping) {
            loadState();
        }
    });
    watch->start();
}

void EtcdClusterBackend::keepAlive()
{
    if (m_keepAliveInFlight || m_lease == 0) {
        return;
    }
    m_keepAliveInFlight = true;
    const quint64 generation = m_generation;
    m_client->leaseKeepAlive(m_lease,
                             [this, generation](const EtcdResult<KeepAliveResponse> &result) {
                                 m_keepAliveInFlight = false;
                                 if (generation != m_generation || m_keepAliveSuspended) {
                                     return;
                                 }
                                 if (!result) {
                                     if (result.error().kind == EtcdError::Kind::LeaseLost
                                         || result.error().isNotFound()) {
                                         leaseLost(result.error().message);
                                     } else {
                                         m_leaseHealthy = false;
                                         failed(result.error(), QStringLiteral("lease keepalive"));
                                     }
                                     return;
                                 }
                                 m_leaseHealthy = true;
                                 m_sinceKeepAlive.start();
                                 releaseOrphanedClaims();
                                 updateAvailability(QString());
                             });
}

void EtcdClusterBackend::leaseLost(const QString &reason)
{
    qCWarning(lcCluster).noquote() << "etcd: lease" << m_lease << "of node" << m_self.id
                                   << "is gone (" << reason << "); registering again";
    ++m_generation;
    m_lease = 0;
    m_registered = false;
    m_registering = false;
    m_keepAliveInFlight = false;
    m_leaseHealthy = false;
    loseAllClaims(QStringLiteral("lease expired: ") + reason);
    updateAvailability(QStringLiteral("lease lost: ") + reason);
    registerSelf();
}

void EtcdClusterBackend::loseAllClaims(const QString &reason)
{
    if (m_owned.isEmpty()) {
        return;
    }
    m_orphansPossible = true;
    const QStringList resources = m_owned.keys();
    m_owned.clear();
    for (const QString &resource : resources) {
        qCWarning(lcCluster).noquote() << "etcd: lost claim" << resource << "-" << reason;
        Q_EMIT claimLost(resource, reason);
    }
}

void EtcdClusterBackend::releaseOrphanedClaims()
{
    if (!m_orphansPossible || m_lease == 0) {
        return;
    }
    m_orphansPossible = false;
    for (auto it = m_claims.cbegin(); it != m_claims.cend(); ++it) {
        if (it->owner != m_self.id || m_owned.contains(it.key())
            || m_pendingClaims.contains(it.key()) || m_claimLeases.value(it.key()) != m_lease) {
            continue;
        }
        // Given up locally (claimLost was emitted) but still stored: delete it so that the
        // cluster decides again, unless someone re-created it meanwhile.
        TxnRequest txn;
        txn.compare.append(Compare::createRevision(claimKey(it.key()), it->createRevision));
        txn.success.append(RequestOp::deleteKey(claimKey(it.key())));
        const QString &resource = it.key();
        m_client->txn(txn, [this, resource](const EtcdResult<TxnResponse> &result) {
            if (!result) {
                m_orphansPossible = true; // try again after the next keepalive
                qCDebug(lcCluster).noquote() << "etcd: releasing orphaned claim" << resource
                                             << "failed:" << result.error().message;
            }
        });
    }
}

void EtcdClusterBackend::failed(const EtcdError &error, const QString &what)
{
    const QString reason = what + QStringLiteral(": ") + error.message;
    if (m_availability != Availability::Unavailable) {
        qCWarning(lcCluster).noquote() << "etcd:" << reason;
    } else {
        qCDebug(lcCluster).noquote() << "etcd:" << reason;
    }
    updateAvailability(reason);
}

void EtcdClusterBackend::updateAvailability(const QString &reasonIfDown)
{
    if (m_stopping) {
        return;
    }
    const bool up = m_registered && m_leaseHealthy && m_watch && m_watch->isEstablished();
    if (up && m_availability == Availability::Unavailable && !m_watchReopened) {
        // Calls answer again, but the watch may still be the one from before the outage, on a
        // connection a partition left dead (it missed a departure for 13 s in the multi-host
        // test). A new stream resumes at the same revision; its established() comes back here.
        m_watchReopened = true;
        m_watch->reopen();
        return;
    }
    if (up) {
        if (m_availability != Availability::Available) {
            m_availability = Availability::Available;
            qCInfo(lcCluster).noquote()
                    << "etcd: available; node" << m_self.id << "at revision" << m_revision;
            Q_EMIT backendAvailable();
        }
        return;
    }
    if (!reasonIfDown.isEmpty() && m_availability != Availability::Unavailable) {
        m_availability = Availability::Unavailable;
        m_watchReopened = false;
        qCWarning(lcCluster).noquote()
                << "etcd: unavailable (" << reasonIfDown
                << "); serving the last known configuration at revision" << m_revision;
        Q_EMIT backendUnavailable(reasonIfDown);
    }
}

// --- cluster state ---------------------------------------------------------------------------

void EtcdClusterBackend::onWatchEvents(const QList<WatchEvent> &events, qint64 revision)
{
    int changed = Nothing;
    for (const WatchEvent &event : events) {
        m_revision = std::max(m_revision, event.kv.modRevision);
        changed |= applyKey(event.kv, event.type == WatchEvent::Type::Delete);
    }
    m_revision = std::max(m_revision, revision);
    if (changed & MembersChanged) {
        Q_EMIT membersChanged(members());
    }
    if (changed & ConfigChanged) {
        Q_EMIT configChanged(configSnapshot());
    }
}

void EtcdClusterBackend::applyRange(const RangeResponse &range)
{
    m_revision = std::max(m_revision, range.revision);
    int changed = Nothing;
    QSet<QByteArray> present;
    for (const KeyValue &kv : range.kvs) {
        present.insert(kv.key);
        changed |= applyKey(kv, false);
    }
    // What we knew and is gone now.
    auto dropMissing = [&](const QStringList &names, auto keyOf) {
        for (const QString &name : names) {
            const QByteArray key = (this->*keyOf)(name);
            if (!present.contains(key)) {
                changed |= applyKey(KeyValue{ key, {}, 0, range.revision, 0, 0 }, true);
            }
        }
    };
    dropMissing(m_members.keys(), &EtcdClusterBackend::nodeKey);
    dropMissing(m_claims.keys(), &EtcdClusterBackend::claimKey);
    dropMissing(m_config.entries.keys(), &EtcdClusterBackend::configKey);
    if (changed & MembersChanged) {
        Q_EMIT membersChanged(members());
    }
    if (changed & ConfigChanged) {
        Q_EMIT configChanged(configSnapshot());
    }
}

int EtcdClusterBackend::applyKey(const KeyValue &kv, bool deleted)
{
    if (!kv.key.startsWith(m_root)) {
        return Nothing;
    }
    const QByteArray rest = kv.key.sliced(m_root.size());
    if (rest.startsWith(NodesDir)) {
        return applyNodeKey(kv, QString::fromUtf8(rest.sliced(NodesDir.size())), deleted);
    }
    if (rest.startsWith(ClaimsDir)) {
        return applyClaimKey(kv, QString::fromUtf8(rest.sliced(ClaimsDir.size())), deleted);
    }
    if (rest.startsWith(ConfigDir)) {
        return applyConfigKey(kv, QString::fromUtf8(rest.sliced(ConfigDir.size())), deleted);
    }
    return Nothing;
}

int EtcdClusterBackend::applyNodeKey(const KeyValue &kv, const QString &id, bool deleted)
{
    if (deleted) {
        return m_members.remove(id) > 0 ? MembersChanged : Nothing;
    }
    auto node = NodeInfo::fromJson(kv.value);
    if (!node || node->id != id) {
        qCWarning(lcCluster).noquote()
                << "etcd: ignoring a malformed node record under" << QString::fromUtf8(kv.key)
                << (node ? QStringLiteral("(id mismatch)") : node.error().message);
        return m_members.remove(id) > 0 ? MembersChanged : Nothing;
    }
    const auto it = m_members.constFind(id);
    if (it != m_members.constEnd() && *it == *node) {
        return Nothing;
    }
    m_members.insert(id, *node);
    return MembersChanged;
}

int EtcdClusterBackend::applyClaimKey(const KeyValue &kv, const QString &resource, bool deleted)
{
    if (deleted) {
        m_claimLeases.remove(resource);
        setClaim(resource, std::nullopt);
        return Nothing;
    }
    auto value = decodeClaimValue(kv.value);
    if (!value) {
        qCWarning(lcCluster).noquote() << "etcd: ignoring a malformed claim under"
                                       << QString::fromUtf8(kv.key) << value.error().message;
        return Nothing;
    }
    m_claimLeases.insert(resource, kv.lease);
    setClaim(resource,
             Claim{ resource, value->owner, value->metadata, kv.createRevision, kv.modRevision });
    return Nothing;
}

int EtcdClusterBackend::applyConfigKey(const KeyValue &kv, const QString &key, bool deleted)
{
    if (deleted) {
        noteConfigLease(key, 0);
        return m_config.entries.remove(key) > 0 ? ConfigChanged : Nothing;
    }
    noteConfigLease(key, kv.lease);
    const ConfigEntry entry{ key, kv.value, kv.modRevision, kv.lease != 0 };
    const auto it = m_config.entries.constFind(key);
    if (it != m_config.entries.constEnd() && *it == entry) {
        return Nothing;
    }
    m_config.entries.insert(key, entry);
    return ConfigChanged;
}

void EtcdClusterBackend::setClaim(const QString &resource, const std::optional<Claim> &claim)
{
    const auto it = m_claims.constFind(resource);
    const std::optional<Claim> old =
            it == m_claims.constEnd() ? std::nullopt : std::optional<Claim>(*it);
    if (old == claim) {
        return;
    }
    if (claim) {
        m_claims.insert(resource, *claim);
    } else {
        m_claims.remove(resource);
    }
    const auto owned = m_owned.constFind(resource);
    if (owned != m_owned.constEnd()
        && (!claim || claim->owner != m_self.id || claim->createRevision != *owned)) {
        m_owned.erase(owned);
        const QString reason = claim ? QStringLiteral("taken over by ") + claim->owner
                                     : QStringLiteral("claim deleted (lease expired or removed)");
        qCWarning(lcCluster).noquote() << "etcd: lost claim" << resource << "-" << reason;
        Q_EMIT claimLost(resource, reason);
    }
    Q_EMIT claimChanged(resource, claim);
}

std::optional<Claim> EtcdClusterBackend::claimOf(const QString &resource) const
{
    const auto it = m_claims.constFind(resource);
    if (it == m_claims.constEnd()) {
        return std::nullopt;
    }
    return *it;
}

// --- claims ----------------------------------------------------------------------------------

void EtcdClusterBackend::claim(const QString &resource, const QByteArray &metadata)
{
    if (!m_registered || m_lease == 0 || m_stopping) {
        later([this, resource] {
            Q_EMIT claimFailed(resource, QStringLiteral("this node is not registered in etcd"));
        });
        return;
    }
    const qint64 lease = m_lease;
    const QByteArray key = claimKey(resource);
    TxnRequest txn;
    txn.compare.append(Compare::createRevision(key, 0)); // create if absent
    txn.success.append(RequestOp::put(key, encodeClaimValue(m_self.id, metadata), lease));
    txn.failure.append(RequestOp::range(key));
    m_pendingClaims.insert(resource);
    m_client->txn(txn, [this, resource, lease](EtcdResult<TxnResponse> result) {
        m_pendingClaims.remove(resource);
        if (!result) {
            if (result.error().isNotFound() && lease == m_lease) {
                leaseLost(result.error().message);
            }
            Q_EMIT claimFailed(resource, result.error().message);
            return;
        }
        if (lease != m_lease || m_stopping) {
            Q_EMIT claimFailed(resource, QStringLiteral("the lease changed meanwhile"));
            return;
        }
        if (result->succeeded) {
            m_owned.insert(resource, result->revision);
            qCDebug(lcCluster).noquote()
                    << "etcd: claimed" << resource << "at revision" << result->revision;
            Q_EMIT claimGranted(resource);
            return;
        }
        const QList<KeyValue> kvs =
                result->responses.isEmpty() ? QList<KeyValue>() : result->responses.first().kvs;
        if (kvs.isEmpty()) {
            Q_EMIT claimFailed(resource, QStringLiteral("the claim vanished meanwhile; retry"));
            return;
        }
        const KeyValue &kv = kvs.first();
        auto value = decodeClaimValue(kv.value);
        if (!value) {
            Q_EMIT claimFailed(resource,
                               QStringLiteral("malformed claim: ") + value.error().message);
            return;
        }
        if (value->owner == m_self.id && kv.lease == m_lease) {
            m_owned.insert(resource, kv.createRevision); // already ours
            Q_EMIT claimGranted(resource);
            return;
        }
        Q_EMIT claimRefused(resource,
                            Claim{ resource, value->owner, value->metadata, kv.createRevision,
                                   kv.modRevision });
    });
}

void EtcdClusterBackend::updateClaim(const QString &resource, const QByteArray &metadata)
{
    const auto owned = m_owned.constFind(resource);
    if (owned == m_owned.constEnd() || m_lease == 0) {
        later([this, resource] {
            Q_EMIT claimLost(resource, QStringLiteral("this node does not hold the claim"));
        });
        return;
    }
    const qint64 createRevision = *owned;
    const QByteArray key = claimKey(resource);
    TxnRequest txn;
    txn.compare.append(Compare::createRevision(key, createRevision)); // still our claim
    txn.success.append(RequestOp::put(key, encodeClaimValue(m_self.id, metadata), m_lease));
    m_client->txn(txn, [this, resource, createRevision](EtcdResult<TxnResponse> result) {
        if (!result) {
            if (result.error().isNotFound()) {
                leaseLost(result.error().message);
                return;
            }
            Q_EMIT claimFailed(resource, result.error().message);
            return;
        }
        const auto it = m_owned.constFind(resource);
        if (!result->succeeded && it != m_owned.constEnd() && *it == createRevision) {
            m_owned.erase(it);
            Q_EMIT claimLost(resource, QStringLiteral("no longer the owner"));
        }
    });
}

void EtcdClusterBackend::release(const QString &resource)
{
    const auto owned = m_owned.constFind(resource);
    if (owned == m_owned.constEnd()) {
        return;
    }
    const qint64 createRevision = *owned;
    m_owned.erase(owned);
    const QByteArray key = claimKey(resource);
    TxnRequest txn;
    txn.compare.append(Compare::createRevision(key, createRevision));
    txn.success.append(RequestOp::deleteKey(key));
    m_client->txn(txn, [this, resource](const EtcdResult<TxnResponse> &result) {
        if (!result) {
            m_orphansPossible = true; // released after the next successful keepalive
            qCWarning(lcCluster).noquote()
                    << "etcd: releasing" << resource << "failed:" << result.error().message;
        }
    });
}

} // namespace rt::cluster
