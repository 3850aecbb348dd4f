#pragma once

#include "server/cdc/cdc_settings.h"
#include "server/cdc/channel_authorization.h"
#include "server/cdc/tenant_database.h"
#include "server/tenants/tenant.h"

#include <QByteArray>
#include <QHash>
#include <QMutex>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QThread>

#include <functional>
#include <memory>

namespace rt::pubsub {
class LocalPubSub;
}
namespace rt::tenants {
class TenantUsageRegistry;
class TenantRates;
} // namespace rt::tenants
namespace rt::metrics {
class ServerMetrics;
}

namespace rt::cdc {

// The tenant databases this node uses, each a TenantDatabase on the node's cdc thread.
// Thread-safe facade: workers call it from any thread; results come back on the caller's
// worker thread through `receiver` (a QObject that lives as long as that worker) and only run
// while `guard` (a QObject of the caller's, on the same thread) is alive.
class CdcService
{
public:
    CdcService(CdcSettings settings, pubsub::LocalPubSub &pubsub,
               tenants::TenantUsageRegistry &usage, const tenants::TenantRates &rates,
               metrics::ServerMetrics &metrics);
    ~CdcService();
    CdcService(const CdcService &) = delete;
    CdcService &operator=(const CdcService &) = delete;

    void start();
    // Closes every tenant database and stops the thread (before the workers' hubs go away).
    void stop();

    // Whether joins of this tenant need its database (it has a postgres_cdc_rls extension
    // whose settings name one).
    static bool usesDatabase(const tenants::Tenant &tenant);

    using Guard = QPointer<QObject>;
    void connect(const tenants::TenantPtr &tenant, QObject *receiver, Guard guard,
                 std::function<void(ConnectOutcome)> done);
    void subscribe(const tenants::TenantPtr &tenant, SubscribeRequest request, QObject *receiver,
                   Guard guard, std::function<void(SubscribeOutcome)> done);
    void unsubscribe(const QByteArray &tenantId, quint64 memberId);
    // `done(true)` once the tenant's replication stream runs; false if it cannot start.
    void whenStreaming(const tenants::TenantPtr &tenant, QObject *receiver, Guard guard,
                       std::function<void(bool)> done);
    // What a private channel may do (spec §7): the read checks (presence only when
    // `checkPresence`), both write checks, and the replay when asked and allowed. Write checks
    // run together with the read check rather than at the first push: the effect is the same
    // (cached per channel until the next access_token), one round of queries fewer later.
    struct ChannelAccess
    {
        std::optional<AuthorizationError> error; // the read check failed
        Permissions permissions;
        bool replayFailed = false;
        QList<StoredMessage> replayed; // oldest first
    };
    void authorizeChannel(const tenants::TenantPtr &tenant, AuthorizationRequest request,
                          bool checkPresence, std::optional<std::pair<qint64, int>> replay,
                          QObject *receiver, Guard guard, std::function<void(ChannelAccess)> done);

    // The broadcast-write check of the HTTP API's private messages (spec §4.4, §4.5): `done`
    // runs on the cdc thread (callers answer through thread-safe responders).
    void checkBroadcastWrite(const tenants::TenantPtr &tenant, AuthorizationRequest request,
                             std::function<void(rt::Result<bool, AuthorizationError>)> done);

    // Runs `job` on the cdc thread with the tenant's database once it is ready (nullptr and the
    // join error when it is not). For authorization queries.
    void withDatabase(const tenants::TenantPtr &tenant,
                      std::function<void(TenantDatabase *, ConnectOutcome)> job);
    // Closes the tenant's database (tenant changed, deleted or shut down through the API).
    void dropTenant(const QByteArray &tenantId);
    // Whether the tenant's database is connected on this node (tenant health).
    bool isConnected(const QByteArray &tenantId) const;

    // Posts `fn` to the caller: on `receiver`'s thread, only if `guard` is still alive there.
    template <typename Fn>
    static void reply(QObject *receiver, Guard guard, Fn fn)
    {
        QMetaObject::invokeMethod(
                receiver,
                [guard = std::move(guard), fn = std::move(fn)]() mutable {
                    if (!guard.isNull()) {
                        fn();
                    }
                },
                Qt::QueuedConnection);
    }

private:
    TenantDatabase *database(const tenants::TenantPtr &tenant); // cdc thread
    void sweepIdle(); // cdc thread

    CdcSettings m_settings;
    pubsub::LocalPubSub &m_pubsub;
    tenants::TenantUsageRegistry &m_usage;
    const tenants::TenantRates &m_rates;
    metrics::ServerMetrics &m_metrics;
    QThread m_thread;
    QObject *m_host = nullptr; // on m_thread; parent of every TenantDatabase
    // cdc thread only:
    struct Entry
    {
        TenantDatabase *database = nullptr;
        tenants::TenantPtr tenant;
        qint64 idleSinceMs = -1;
    };
    QHash<QByteArray, Entry> m_databases;
    // Read by other threads (health):
    mutable QMutex m_connectedMutex;
    QSet<QByteArray> m_connected; // guarded by m_connectedMutex
};

} // namespace rt::cdc
