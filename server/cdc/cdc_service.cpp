#include "server/cdc/cdc_service.h"

#include "server/cdc/logging.h"
#include "server/cdc/stream_cluster.h"
#include "server/metrics/catalog.h"
#include "server/postgres/connection_settings.h"
#include "server/pubsub/local_pubsub.h"
#include "server/pubsub/pubsub.h"
#include "server/runtime/post.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_rates.h"

#include <QDateTime>
#include <QLoggingCategory>
#include <QTimer>

namespace rt::cdc {

namespace {

QByteArray setting(const QJsonObject &settings, const char *key, const QByteArray &fallback)
{
    const QString value = settings.value(QLatin1String(key)).toString();
    return value.isEmpty() ? fallback : value.toUtf8();
}

// Other nodes' subscribers are registered with the owner's TenantDatabase under ids with this
// bit set: this node's own member ids never have it (they count up from 1), and sorted member
// lists keep them at the end.
constexpr quint64 ProxyBit = quint64(1) << 63;

QString proxyKey(const QString &node, const QByteArray &tenantId, quint64 memberId)
{
    return node + u'/' + QString::fromUtf8(tenantId) + u'/' + QString::number(memberId);
}

} // namespace

// What tenant databases publish through: database broadcasts go to the node's publisher (the
// whole cluster), postgres_changes for this node's members to the local fan-out, and those for
// other nodes' members (proxy ids) to their nodes. Used on the cdc thread only.
class CdcService::DeliveryRouter final : public pubsub::PubSub
{
public:
    explicit DeliveryRouter(const CdcService &service) : m_service(service) { }
    void publish(const pubsub::OutboundMessagePtr &message) const override
    {
        if (message->audience() == pubsub::Audience::Members && !message->members().empty()
            && (message->members().back() & ProxyBit) != 0) {
            m_service.publishSplit(message);
            return;
        }
        m_service.m_publisher.publish(message);
    }
    void publishLocal(const pubsub::OutboundMessagePtr &message) const override
    {
        m_service.m_pubsub.publishLocal(message);
    }
    bool awaitTenantReachable(const QByteArray &tenantId, QObject *receiver,
                              std::function<void()> reachable) const override
    {
        return m_service.m_publisher.awaitTenantReachable(tenantId, receiver, std::move(reachable));
    }

private:
    const CdcService &m_service;
};

CdcService::CdcService(CdcSettings settings, pubsub::LocalPubSub &local,
                       const pubsub::PubSub &publisher, tenants::TenantUsageRegistry &usage,
                       const tenants::TenantRates &rates, metrics::ServerMetrics &metrics)
    : m_settings(std::move(settings)),
      m_pubsub(local),
      m_publisher(publisher),
      m_router(std::make_unique<DeliveryRouter>(*this)),
      m_usage(usage),
      m_rates(rates),
      m_metrics(metrics)
{
    m_thread.setObjectName(QStringLiteral("cdc"));
}

CdcService::~CdcService()
{
    stop();
}

void CdcService::start()
{
    if (m_host != nullptr) {
        return;
    }
    m_host = new QObject; // NOLINT: deleted on its thread when the thread finishes
    m_host->moveToThread(&m_thread);
    QObject::connect(&m_thread, &QThread::finished, m_host, &QObject::deleteLater);
    m_thread.start();
    runtime::post(m_host, [this] {
        auto *sweeper = new QTimer(m_host); // NOLINT: child of the host
        QObject::connect(sweeper, &QTimer::timeout, m_host, [this] { sweepIdle(); });
        sweeper->start(qMax(1000, m_settings.idleTimeoutMs / 4));
    });
}

void CdcService::stop()
{
    if (m_host == nullptr || !m_thread.isRunning()) {
        return;
    }
    runtime::post(m_host, [this] {
        m_cluster = nullptr; // the node leaves the cluster after this: its claims go with it
        for (const Entry &entry : std::as_const(m_databases)) {
            delete entry.database;
        }
        m_databases.clear();
        QThread::currentThread()->quit();
    });
    m_thread.wait();
    m_host = nullptr;
}

bool CdcService::usesDatabase(const tenants::Tenant &tenant)
{
    const tenants::Extension *extension = tenant.databaseExtension();
    return extension != nullptr && postgres::settingsFromExtension(extension->settings).has_value();
}

TenantDatabase *CdcService::database(const tenants::TenantPtr &tenant)
{
    Entry &entry = m_databases[tenant->externalId];
    if (entry.database != nullptr && entry.tenant != tenant
        && entry.tenant->databaseExtension()->settings != tenant->databaseExtension()->settings) {
        // The tenant's database settings changed: start over with the new ones.
        delete entry.database;
        entry.database = nullptr;
    }
    entry.tenant = tenant;
    if (entry.database == nullptr) {
        const tenants::Extension *extension = tenant->databaseExtension();
        TenantDatabaseOptions options;
        options.tenantId = tenant->externalId;
        options.settings = postgres::settingsFromExtension(extension->settings).value();
        options.settings.applicationName = QStringLiteral("qtrealtime");
        options.publication =
                setting(extension->settings, "publication", QByteArrayLiteral("supabase_realtime"));
        options.slotName = setting(extension->settings, "slot_name",
                                   QByteArrayLiteral("supabase_realtime_replication_slot"));
        if (!m_settings.slotNameSuffix.isEmpty()) {
            options.slotName += '_' + m_settings.slotNameSuffix;
        }
        options.poolSize = m_settings.poolSize;
        options.connectRetryMs = m_settings.connectRetryMs;
        options.rlsStrategy = m_settings.naiveRls ? RlsStrategy::Naive : RlsStrategy::Batched;
        // Every delivered copy counts as a database event of the tenant (metrics, no limit).
        const pubsub::DeliveryCounting counting{
            m_rates.dbEvents(*tenant), false, m_metrics.messagesOut.labels({ tenant->externalId })
        };
        entry.counting = counting;
        entry.database = new TenantDatabase(options, *m_router, counting, m_host);
        const QByteArray tenantId = tenant->externalId;
        if (m_clustered) {
            // Queries only until the cluster names this node the stream's owner.
            entry.database->setStreamAllowed(false);
            entry.role = StreamRole::Unknown;
            entry.owner.clear();
            entry.ownerReady = false;
            if (m_cluster != nullptr) {
                m_cluster->need(tenantId);
            }
        }
        QObject::connect(entry.database, &TenantDatabase::connectionReady, m_host,
                         [this, tenantId] {
                             const QMutexLocker lock(&m_connectedMutex);
                             m_connected.insert(tenantId);
                         });
        QObject::connect(entry.database, &TenantDatabase::connectionLost, m_host, [this, tenantId] {
            const QMutexLocker lock(&m_connectedMutex);
            m_connected.remove(tenantId);
        });
    }
    entry.idleSinceMs = -1;
    return entry.database;
}

void CdcService::connect(const tenants::TenantPtr &tenant, QObject *receiver, Guard guard,
                         std::function<void(ConnectOutcome)> done)
{
    runtime::post(
            m_host,
            [this, tenant, receiver, guard = std::move(guard), done = std::move(done)]() mutable {
                TenantDatabase *db = database(tenant);
                const QByteArray tenantId = tenant->externalId;
                db->connect([this, tenantId, receiver, guard = std::move(guard),
                             done = std::move(done)](const ConnectOutcome &outcome) mutable {
                    if (!outcome) {
                        const QMutexLocker lock(&m_connectedMutex);
                        m_connected.insert(tenantId);
                    }
                    reply(receiver, std::move(guard),
                          [done = std::move(done), outcome]() mutable { done(outcome); });
                });
            });
}

void CdcService::subscribe(const tenants::TenantPtr &tenant, SubscribeRequest request,
                           QObject *receiver, Guard guard,
                           std::function<void(SubscribeOutcome)> done)
{
    runtime::post(m_host,
                  [this, tenant, request = std::move(request), receiver, guard = std::move(guard),
                   done = std::move(done)]() mutable {
                      auto answer = [receiver, guard = std::move(guard), done = std::move(done)](
                                            const SubscribeOutcome &outcome) mutable {
                          reply(receiver, std::move(guard),
                                [done = std::move(done), outcome]() mutable { done(outcome); });
                      };
                      TenantDatabase *db = database(tenant);
                      if (!m_clustered) {
                          db->subscribe(std::move(request), std::move(answer));
                          return;
                      }
                      // Kept here whoever owns the stream, to register it again with a next owner.
                      const quint64 memberId = request.memberId;
                      Entry &entry = m_databases[tenant->externalId];
                      entry.local.insert(
                              memberId, LocalSubscription{ std::move(request), std::move(answer) });
                      routeSubscription(tenant->externalId, memberId);
                  });
}

void CdcService::routeSubscription(const QByteArray &tenantId, quint64 memberId)
{
    const auto entryIt = m_databases.find(tenantId);
    if (entryIt == m_databases.end()) {
        return;
    }
    Entry &entry = entryIt.value();
    const auto it = entry.local.constFind(memberId);
    if (it == entry.local.constEnd()) {
        return;
    }
    switch (entry.role) {
    case StreamRole::Standalone:
    case StreamRole::Owner:
        entry.database->subscribe(it->request,
                                  [this, tenantId, memberId](const SubscribeOutcome &outcome) {
                                      answerLocal(tenantId, memberId, outcome);
                                  });
        return;
    case StreamRole::Remote: {
        const quint64 token = ++m_nextToken;
        m_sent.insert(token, SentSubscribe{ tenantId, memberId, entry.owner });
        m_cluster->sendSubscribe(entry.owner, token, it->request);
        return;
    }
    case StreamRole::Unknown:
        return; // registered once the cluster names the owner
    }
}

void CdcService::answerLocal(const QByteArray &tenantId, quint64 memberId,
                             const SubscribeOutcome &outcome)
{
    const auto entryIt = m_databases.find(tenantId);
    if (entryIt == m_databases.end()) {
        return;
    }
    const auto it = entryIt->local.find(memberId);
    if (it == entryIt->local.end()) {
        return; // the channel left meanwhile
    }
    if (it->done) {
        auto done = std::move(it->done);
        it->done = nullptr;
        if (!outcome.ok) {
            entryIt->local.erase(it); // nothing to register again
        }
        done(outcome);
    } else if (!outcome.ok) {
        // Registering again with a new owner failed (its database refused the rows): the
        // channel keeps its earlier answer; say why it receives nothing any more.
        qCWarning(lcCdc) << "tenant" << tenantId << "member" << memberId
                         << "could not be registered with the new stream owner:" << outcome.message;
    }
}

void CdcService::unsubscribe(const QByteArray &tenantId, quint64 memberId)
{
    runtime::post(m_host, [this, tenantId, memberId] {
        const auto it = m_databases.find(tenantId);
        if (it == m_databases.end() || it->database == nullptr) {
            return;
        }
        it->local.remove(memberId);
        if (it->role == StreamRole::Remote) {
            m_cluster->sendUnsubscribe(it->owner, tenantId, memberId);
        } else {
            it->database->unsubscribe(memberId);
        }
    });
}

void CdcService::whenStreaming(const tenants::TenantPtr &tenant, QObject *receiver, Guard guard,
                               std::function<void(bool)> done)
{
    runtime::post(
            m_host,
            [this, tenant, receiver, guard = std::move(guard), done = std::move(done)]() mutable {
                TenantDatabase *db = database(tenant);
                auto answer = [receiver, guard = std::move(guard),
                               done = std::move(done)](bool ready) mutable {
                    reply(receiver, std::move(guard),
                          [done = std::move(done), ready]() mutable { done(ready); });
                };
                Entry &entry = m_databases[tenant->externalId];
                if (entry.role == StreamRole::Remote && entry.ownerReady) {
                    answer(true);
                    return;
                }
                if (entry.role == StreamRole::Remote || entry.role == StreamRole::Unknown) {
                    entry.streamWaiters.push_back(std::move(answer));
                    return;
                }
                QPointer<TenantDatabase> alive(db);
                db->connect([alive,
                             answer = std::move(answer)](const ConnectOutcome &outcome) mutable {
                    if (outcome || alive.isNull()) {
                        answer(false);
                        return;
                    }
                    alive->whenStreaming([answer = std::move(answer)]() mutable { answer(true); });
                });
            });
}

void CdcService::withDatabase(const tenants::TenantPtr &tenant,
                              std::function<void(TenantDatabase *, ConnectOutcome)> job)
{
    runtime::post(m_host, [this, tenant, job = std::move(job)]() mutable {
        TenantDatabase *db = database(tenant);
        QPointer<TenantDatabase> alive(db);
        db->connect([alive, job = std::move(job)](const ConnectOutcome &outcome) mutable {
            if (alive.isNull()) {
                job(nullptr,
                    QStringLiteral("UnableToConnectToProject: Realtime was unable to "
                                   "connect to the project database"));
                return;
            }
            job(outcome ? nullptr : alive.data(), outcome);
        });
    });
}

namespace {

// The steps of a private channel's checks on the cdc thread, one after the other: read, then (if
// anything may be read) broadcast write, presence write, and the replay when asked and allowed.
// Each step stops the chain with what was found so far if the database went away.
struct ChannelAccessSteps : std::enable_shared_from_this<ChannelAccessSteps>
{
    QPointer<TenantDatabase> database;
    AuthorizationRequest request;
    std::optional<std::pair<qint64, int>> replayRange;
    CdcService::ChannelAccess access;
    std::function<void(CdcService::ChannelAccess)> finish;

    postgres::Pool *pool() const { return database.isNull() ? nullptr : database->pool(); }
    void done() { finish(std::move(access)); }

    void read(bool checkPresence)
    {
        checkRead(*pool(), request, checkPresence,
                  [self = shared_from_this()](rt::Result<Permissions, AuthorizationError> read) {
                      if (!read) {
                          self->access.error = read.error();
                          self->done();
                          return;
                      }
                      self->access.permissions = read.value();
                      const Permissions &p = self->access.permissions;
                      if (!p.broadcastRead.value_or(false) && !p.presenceRead.value_or(false)) {
                          self->done(); // refused: writes and replay do not matter
                          return;
                      }
                      self->write(QByteArrayLiteral("broadcast"));
                  });
    }

    void write(const QByteArray &extension)
    {
        if (pool() == nullptr) {
            done();
            return;
        }
        checkWrite(*pool(), request, extension,
                   [self = shared_from_this(),
                    extension](rt::Result<bool, AuthorizationError> allowed) {
                       const std::optional<bool> answer =
                               allowed ? std::optional<bool>(allowed.value()) : std::nullopt;
                       if (extension == "broadcast") {
                           self->access.permissions.broadcastWrite = answer;
                           self->write(QByteArrayLiteral("presence"));
                       } else {
                           self->access.permissions.presenceWrite = answer;
                           self->replay();
                       }
                   });
    }

    void replay()
    {
        if (!replayRange || !access.permissions.broadcastRead.value_or(false)
            || pool() == nullptr) {
            done();
            return;
        }
        cdc::replay(*pool(), request.topic, replayRange->first, replayRange->second,
                    [self = shared_from_this()](
                            rt::Result<QList<StoredMessage>, AuthorizationError> rows) {
                        if (rows) {
                            self->access.replayed = rows.value();
                        } else {
                            self->access.replayFailed = true;
                        }
                        self->done();
                    });
    }
};

} // namespace

void CdcService::authorizeChannel(const tenants::TenantPtr &tenant, AuthorizationRequest request,
                                  bool checkPresence, std::optional<std::pair<qint64, int>> replay,
                                  QObject *receiver, Guard guard,
                                  std::function<void(ChannelAccess)> done)
{
    // Answers on the caller's thread.
    auto finish = [receiver, guard = std::move(guard),
                   done = std::move(done)](ChannelAccess access) mutable {
        reply(receiver, std::move(guard),
              [done = std::move(done), access = std::move(access)]() mutable { done(access); });
    };
    withDatabase(tenant,
                 [request = std::move(request), checkPresence, replay, finish = std::move(finish)](
                         TenantDatabase *db, const ConnectOutcome &outcome) mutable {
                     auto steps = std::make_shared<ChannelAccessSteps>();
                     steps->database = db;
                     steps->request = std::move(request);
                     steps->replayRange = replay;
                     steps->finish = std::move(finish);
                     if (steps->pool() == nullptr) {
                         steps->access.error =
                                 AuthorizationError{ AuthorizationFailure::DatabaseUnavailable,
                                                     outcome.value_or(QString()),
                                                     {} };
                         steps->done();
                         return;
                     }
                     steps->read(checkPresence);
                 });
}

void CdcService::checkBroadcastWrite(const tenants::TenantPtr &tenant, AuthorizationRequest request,
                                     std::function<void(rt::Result<bool, AuthorizationError>)> done)
{
    withDatabase(tenant,
                 [request = std::move(request), done = std::move(done)](
                         TenantDatabase *db, const ConnectOutcome &outcome) mutable {
                     if (db == nullptr || db->pool() == nullptr) {
                         done(AuthorizationError{ AuthorizationFailure::DatabaseUnavailable,
                                                  outcome.value_or(QString()),
                                                  {} });
                         return;
                     }
                     checkWrite(*db->pool(), request, QByteArrayLiteral("broadcast"),
                                std::move(done));
                 });
}

void CdcService::dropTenant(const QByteArray &tenantId)
{
    if (m_host == nullptr) {
        return;
    }
    runtime::post(m_host, [this, tenantId] { closeEntry(tenantId); });
}

void CdcService::closeEntry(const QByteArray &tenantId)
{
    Entry entry = m_databases.take(tenantId);
    if (entry.role == StreamRole::Remote) {
        for (auto it = entry.local.cbegin(); it != entry.local.cend(); ++it) {
            m_cluster->sendUnsubscribe(entry.owner, tenantId, it.key());
        }
    }
    for (auto it = m_proxies.begin(); it != m_proxies.end();) {
        if (it->tenantId == tenantId) {
            m_proxyOf.remove(proxyKey(it->node, it->tenantId, it->memberId));
            it = m_proxies.erase(it);
        } else {
            ++it;
        }
    }
    for (auto &waiter : entry.streamWaiters) {
        waiter(false);
    }
    delete entry.database;
    {
        const QMutexLocker lock(&m_connectedMutex);
        m_connected.remove(tenantId);
        m_owned.remove(tenantId);
    }
    if (m_cluster != nullptr) {
        m_cluster->release(tenantId);
    }
}

bool CdcService::isConnected(const QByteArray &tenantId) const
{
    const QMutexLocker lock(&m_connectedMutex);
    return m_connected.contains(tenantId);
}

QList<QByteArray> CdcService::ownedStreams() const
{
    const QMutexLocker lock(&m_connectedMutex);
    QList<QByteArray> owned(m_owned.cbegin(), m_owned.cend());
    std::sort(owned.begin(), owned.end());
    return owned;
}

void CdcService::sweepIdle()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QList<QByteArray> closing;
    for (auto it = m_databases.begin(); it != m_databases.end(); ++it) {
        Entry &entry = it.value();
        // A database that is connecting has joins waiting for it: never idle. An owner's
        // registry also holds other nodes' subscribers, and other nodes' clients of the tenant
        // read its database broadcasts.
        const bool idle = !entry.database->isConnecting() && entry.database->subscriberCount() == 0
                && entry.local.isEmpty() && entry.pendingRemote.empty()
                && m_usage.usage(it.key())->connectedUsers.load(std::memory_order_relaxed) == 0
                && !(entry.role == StreamRole::Owner && m_heldByPeers.contains(it.key()));
        if (!idle) {
            entry.idleSinceMs = -1;
            continue;
        }
        if (entry.idleSinceMs < 0) {
            entry.idleSinceMs = now;
        }
        if (now - entry.idleSinceMs >= m_settings.idleTimeoutMs) {
            closing.append(it.key());
        }
    }
    for (const QByteArray &tenantId : std::as_const(closing)) {
        qCInfo(lcCdc) << "closing the idle database connection of tenant" << tenantId;
        closeEntry(tenantId);
    }
}

// --- the cluster -------------------------------------------------------------------------------

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
    runtime::post(m_host, [this, tenantId, owner, ready] {
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
        const bool sameOwner = role == entry.role
                && (role != StreamRole::Remote || entry.owner == owner.value_or(QString()));
        if (sameOwner) {
            if (role == StreamRole::Remote && ready && !entry.ownerReady) {
                entry.ownerReady = true;
                auto waiters = std::move(entry.streamWaiters);
                entry.streamWaiters.clear();
                for (auto &waiter : waiters) {
                    waiter(true);
                }
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
        for (auto sent = m_sent.begin(); sent != m_sent.end();) {
            sent = sent->tenantId == tenantId ? m_sent.erase(sent) : std::next(sent);
        }
        if (role == StreamRole::Owner) {
            takeOwnership(tenantId, entry);
            return;
        }
        auto pending = std::move(entry.pendingRemote);
        entry.pendingRemote.clear();
        for (const PendingRemoteSubscribe &request : pending) {
            if (role == StreamRole::Remote) {
                m_cluster->sendSubscribeAnswer(request.fromNode, tenantId, request.token, {}, true);
            } else {
                entry.pendingRemote.push_back(request); // still nobody: keep waiting
            }
        }
        if (role == StreamRole::Remote) {
            const QList<quint64> members = entry.local.keys();
            for (const quint64 memberId : members) {
                routeSubscription(tenantId, memberId);
            }
            if (entry.ownerReady) {
                auto waiters = std::move(entry.streamWaiters);
                entry.streamWaiters.clear();
                for (auto &waiter : waiters) {
                    waiter(true);
                }
            }
        }
    });
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

void CdcService::remoteSubscribe(const QString &fromNode, const tenants::TenantPtr &tenant,
                                 quint64 token, SubscribeRequest request)
{
    runtime::post(m_host, [this, fromNode, tenant, token, request = std::move(request)]() mutable {
        database(tenant);
        Entry &entry = m_databases[tenant->externalId];
        acceptRemote(tenant->externalId, entry,
                     PendingRemoteSubscribe{ fromNode, token, std::move(request) });
    });
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
                         RemoteMember{ pending.fromNode, tenantId, pending.request.memberId });
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
    const RemoteMember member = it.value();
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
        const SentSubscribe request = sent.value();
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
    QHash<QString, std::vector<quint64>> remote;
    for (const quint64 member : message->members()) {
        if ((member & ProxyBit) == 0) {
            local.push_back(member);
        } else if (const auto it = m_proxies.constFind(member); it != m_proxies.constEnd()) {
            remote[it->node].push_back(it->memberId);
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
        std::sort(it->begin(), it->end());
        m_cluster->sendDelivery(it.key(), message->topic(), message->event(), message->payload(),
                                std::move(it.value()));
    }
}

void CdcService::nodeLeft(const QString &nodeId)
{
    runtime::post(m_host, [this, nodeId] {
        QList<quint64> proxies;
        for (auto it = m_proxies.cbegin(); it != m_proxies.cend(); ++it) {
            if (it->node == nodeId) {
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
                                             return request.fromNode == nodeId;
                                         }),
                          pending.end());
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
