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

#include <algorithm>

namespace rt::cdc {

namespace {

QByteArray setting(const QJsonObject &settings, const char *key, const QByteArray &fallback)
{
    const QString value = settings.value(QLatin1String(key)).toString();
    return value.isEmpty() ? fallback : value.toUtf8();
}

} // namespace

// What tenant databases publish through: database broadcasts go to the node's publisher (the
// whole cluster), postgres_changes for this node's members to the local fan-out, and those for
// other nodes' members (proxy ids) to their nodes. Used on the cdc thread only.
class CdcService::DeliveryRouter final : public pubsub::PubSub
{
    static bool addressesOtherNodes(const pubsub::OutboundMessagePtr &message)
    {
        return message->audience() == pubsub::Audience::Members && !message->members().empty()
                && (message->members().back() & ProxyBit) != 0;
    }

public:
    explicit DeliveryRouter(const CdcService &service) : m_service(service) { }
    void publish(const pubsub::OutboundMessagePtr &message) const override
    {
        publishGroup({ message });
    }
    void publishGroup(const std::vector<pubsub::OutboundMessagePtr> &messages) const override
    {
        if (std::none_of(messages.begin(), messages.end(), addressesOtherNodes)) {
            m_service.m_publisher.publishGroup(messages); // one event: one position
            return;
        }
        // One position for the whole change, this node's members and the others' alike.
        m_service.m_publisher.publishGroupThrough(
                messages, [this](const pubsub::OutboundMessagePtr &message) {
                    if (addressesOtherNodes(message)) {
                        m_service.publishSplit(message);
                    } else {
                        m_service.m_publisher.publish(message); // numbered: passes through
                    }
                });
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

QString CdcService::proxyKey(const QString &node, const QByteArray &tenantId, quint64 memberId)
{
    return node + u'/' + QString::fromUtf8(tenantId) + u'/' + QString::number(memberId);
}

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
    m_host = new QObject; // deleted on its thread when the thread finishes
    m_host->moveToThread(&m_thread);
    QObject::connect(&m_thread, &QThread::finished, m_host, &QObject::deleteLater);
    m_thread.start();
    runtime::post(m_host, [this] {
        auto *sweeper = new QTimer(m_host); // child of the host
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
        if (options.settings.sslMode == QLatin1String("verify-full")) {
            options.settings.sslRootCert = m_settings.sslRootCert.isEmpty()
                    ? QString::fromLatin1(SystemCaBundle)
                    : m_settings.sslRootCert;
        }
        options.publication =
                setting(extension->settings, "publication", QByteArrayLiteral("supabase_realtime"));
        options.slotName = setting(extension->settings, "slot_name",
                                   QByteArrayLiteral("supabase_realtime_replication_slot"));
        if (!m_settings.slotNameSuffix.isEmpty()) {
            options.slotName += '_' + m_settings.slotNameSuffix;
        }
        options.poolSize = m_settings.poolSize;
        options.maxInflightBytes = m_settings.maxInflightBytes;
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
                             // The analyzer loses the captured `this` here (false positive).
                             // NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage)
                             m_connected.insert(tenantId);
                         });
        QObject::connect(entry.database, &TenantDatabase::connectionLost, m_host, [this, tenantId] {
            const QMutexLocker lock(&m_connectedMutex);
            // The analyzer loses the captured `this` here (false positive).
            // NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage)
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
                        // The analyzer loses the captured `this` here (false positive).
                        // NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage)
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
                    entry.streamWaiters.emplace_back(std::move(answer));
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

namespace {

// Runs `job(pool, done)` on the cdc thread with the tenant's pool; without one, `done` gets
// DatabaseUnavailable with the connect error.
template <typename T, typename Job>
void withPool(CdcService &service, const tenants::TenantPtr &tenant, Job job,
              std::function<void(rt::Result<T, AuthorizationError>)> done)
{
    service.withDatabase(tenant,
                         [job = std::move(job), done = std::move(done)](
                                 TenantDatabase *db, const ConnectOutcome &outcome) mutable {
                             if (db == nullptr || db->pool() == nullptr) {
                                 done(AuthorizationError{ AuthorizationFailure::DatabaseUnavailable,
                                                          outcome.value_or(QString()),
                                                          {} });
                                 return;
                             }
                             job(*db->pool(), std::move(done));
                         });
}

} // namespace

void CdcService::checkBroadcastWrite(const tenants::TenantPtr &tenant, AuthorizationRequest request,
                                     std::function<void(rt::Result<bool, AuthorizationError>)> done)
{
    withPool<bool>(
            *this, tenant,
            [request = std::move(request)](postgres::Pool &pool, auto answer) {
                checkWrite(pool, request, QByteArrayLiteral("broadcast"), std::move(answer));
            },
            std::move(done));
}

void CdcService::persistBroadcast(
        const tenants::TenantPtr &tenant, PersistRequest request,
        std::function<void(rt::Result<PersistOutcome, AuthorizationError>)> done)
{
    withPool<PersistOutcome>(
            *this, tenant,
            [request = std::move(request)](postgres::Pool &pool, auto answer) {
                persist(pool, request, std::move(answer));
            },
            std::move(done));
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

} // namespace rt::cdc
