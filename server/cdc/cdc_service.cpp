#include "server/cdc/cdc_service.h"

#include "server/cdc/logging.h"
#include "server/metrics/catalog.h"
#include "server/postgres/connection_settings.h"
#include "server/pubsub/local_pubsub.h"
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

} // namespace

CdcService::CdcService(CdcSettings settings, pubsub::LocalPubSub &pubsub,
                       tenants::TenantUsageRegistry &usage, const tenants::TenantRates &rates,
                       metrics::ServerMetrics &metrics)
    : m_settings(std::move(settings)),
      m_pubsub(pubsub),
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
        entry.database = new TenantDatabase(options, m_pubsub, counting, m_host);
        const QByteArray tenantId = tenant->externalId;
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
    runtime::post(
            m_host,
            [this, tenant, request = std::move(request), receiver, guard = std::move(guard),
             done = std::move(done)]() mutable {
                database(tenant)->subscribe(
                        std::move(request),
                        [receiver, guard = std::move(guard),
                         done = std::move(done)](const SubscribeOutcome &outcome) mutable {
                            reply(receiver, std::move(guard),
                                  [done = std::move(done), outcome]() mutable { done(outcome); });
                        });
            });
}

void CdcService::unsubscribe(const QByteArray &tenantId, quint64 memberId)
{
    runtime::post(m_host, [this, tenantId, memberId] {
        const auto it = m_databases.constFind(tenantId);
        if (it != m_databases.constEnd() && it->database != nullptr) {
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
                QPointer<TenantDatabase> alive(db);
                db->connect([alive, receiver, guard = std::move(guard),
                             done = std::move(done)](const ConnectOutcome &outcome) mutable {
                    if (outcome || alive.isNull()) {
                        reply(receiver, std::move(guard),
                              [done = std::move(done)] { done(false); });
                        return;
                    }
                    alive->whenStreaming([receiver, guard = std::move(guard),
                                          done = std::move(done)]() mutable {
                        reply(receiver, std::move(guard), [done = std::move(done)] { done(true); });
                    });
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
    runtime::post(m_host, [this, tenantId] {
        const Entry entry = m_databases.take(tenantId);
        delete entry.database;
        const QMutexLocker lock(&m_connectedMutex);
        m_connected.remove(tenantId);
    });
}

bool CdcService::isConnected(const QByteArray &tenantId) const
{
    const QMutexLocker lock(&m_connectedMutex);
    return m_connected.contains(tenantId);
}

void CdcService::sweepIdle()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    for (auto it = m_databases.begin(); it != m_databases.end();) {
        Entry &entry = it.value();
        // A database that is connecting has joins waiting for it: never idle.
        const bool idle = !entry.database->isConnecting() && entry.database->subscriberCount() == 0
                && m_usage.usage(it.key())->connectedUsers.load(std::memory_order_relaxed) == 0;
        if (!idle) {
            entry.idleSinceMs = -1;
            ++it;
            continue;
        }
        if (entry.idleSinceMs < 0) {
            entry.idleSinceMs = now;
        }
        if (now - entry.idleSinceMs < m_settings.idleTimeoutMs) {
            ++it;
            continue;
        }
        qCInfo(lcCdc) << "closing the idle database connection of tenant" << it.key();
        delete entry.database;
        {
            const QMutexLocker lock(&m_connectedMutex);
            m_connected.remove(it.key());
        }
        it = m_databases.erase(it);
    }
}

} // namespace rt::cdc
