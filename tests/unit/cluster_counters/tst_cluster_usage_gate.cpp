// The connect check counts the users other nodes reported: the real ConnectGate over the real
// directory refuses a tenant's socket once this node's users plus TenantUsage::remoteUsers reach
// max_concurrent_users, and admits again when the remote figure drops (a peer's user left, or
// the peer left the cluster).
#include "server/auth/jwt.h"
#include "server/gateway/connect_gate.h"
#include "server/limits/rate_counter_registry.h"
#include "server/metrics/catalog.h"
#include "server/metrics/registry.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_rates.h"
#include "shared/core/clock.h"

#include <QDateTime>
#include <QJsonObject>
#include <QTest>

using namespace rt;

namespace {

const QByteArray Secret = QByteArrayLiteral("usage-gate-test-secret-0123456789abcdef");

tenants::TenantPtr tenantWithLimit(const QByteArray &externalId, int maxUsers)
{
    auto tenant = std::make_shared<tenants::Tenant>();
    tenant->externalId = externalId;
    tenant->jwtSecret = Secret;
    Result<std::shared_ptr<const auth::KeySet>> keys = auth::KeySet::build(Secret, {});
    if (keys) {
        tenant->keys = *keys;
    }
    tenant->maxConcurrentUsers = maxUsers;
    tenant->maxEventsPerSecond = 100;
    tenant->maxJoinsPerSecond = 100;
    tenant->maxPresenceEventsPerSecond = 1000;
    tenant->maxPayloadSizeInKb = 3000;
    return tenant;
}

} // namespace

class ClusterUsageGateTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        m_directory.replaceAll({ tenantWithLimit("acme", 2) });
        m_gate = std::make_unique<gateway::ConnectGate>(gateway::ConnectSettings{}, m_directory,
                                                        m_usage, m_rates, m_metrics, m_clock);
    }

    void remoteUsersCountAgainstTheLimit()
    {
        const std::shared_ptr<tenants::TenantUsage> usage = m_usage.usage("acme");
        QCOMPARE(usage->clusterUsers(), 0);
        usage->connectedUsers.store(1);
        QVERIFY(connect().accepted); // 1 of 2 here, nobody elsewhere

        usage->remoteUsers.store(1); // another node reported one user
        QCOMPARE(usage->clusterUsers(), 2);
        const gateway::ConnectGate::Decision refused = connect();
        QVERIFY(!refused.accepted);
        QCOMPARE(refused.refusal.status, 429);
        QCOMPARE(refused.refusal.body, QByteArray(R"({"error":"Too many connected users"})"));

        // Refused with no user at all on this node when the others fill the tenant.
        usage->connectedUsers.store(0);
        usage->remoteUsers.store(2);
        QVERIFY(!connect().accepted);

        usage->remoteUsers.store(1); // the peer's user left
        QVERIFY(connect().accepted);
    }

private:
    gateway::ConnectGate::Decision connect()
    {
        const QJsonObject claims{
            { QStringLiteral("role"), QStringLiteral("anon") },
            { QStringLiteral("exp"), QDateTime::currentSecsSinceEpoch() + 600 },
        };
        wire::HttpRequest request;
        request.method = "GET";
        request.path = "/socket/websocket";
        request.query = "vsn=2.0.0&apikey=" + auth::signHmac(claims, Secret);
        request.target = request.path + '?' + request.query;
        request.headers.append({ QByteArrayLiteral("host"), QByteArrayLiteral("acme.localhost") });
        request.upgrade = true;
        return m_gate->check(request);
    }

    SystemClock m_clock;
    tenants::TenantDirectory m_directory;
    tenants::TenantUsageRegistry m_usage;
    limits::RateCounterRegistry m_counters;
    tenants::TenantRates m_rates{ m_counters };
    metrics::Registry m_metricsRegistry;
    metrics::ServerMetrics m_metrics{ m_metricsRegistry };
    std::unique_ptr<gateway::ConnectGate> m_gate;
};

QTEST_GUILESS_MAIN(ClusterUsageGateTest)
#include "tst_cluster_usage_gate.moc"
