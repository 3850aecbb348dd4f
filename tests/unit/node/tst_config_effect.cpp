// What a cluster configuration snapshot does to a node: tenant_limits.<id> changes the limits the
// connect checks and the rate counters use, tenant_flags.<id> {"suspend": true} stops the tenant
// from accepting new sockets (and disconnects its clients), and deleting the keys (or their lease
// expiring) restores the stored settings. Runs the real ConnectGate over the real directory.
#include "server/auth/jwt.h"
#include "server/gateway/connect_gate.h"
#include "server/limits/rate_counter_registry.h"
#include "server/metrics/catalog.h"
#include "server/metrics/registry.h"
#include "server/node/cluster_config.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_rates.h"
#include "shared/core/clock.h"

#include <QDateTime>
#include <QJsonObject>
#include <QTest>

using namespace rt;

namespace {

const QByteArray Secret = QByteArrayLiteral("effect-test-secret-0123456789abcdef");

tenants::TenantPtr storedTenant(const QByteArray &externalId)
{
    auto tenant = std::make_shared<tenants::Tenant>();
    tenant->externalId = externalId;
    tenant->jwtSecret = Secret;
    Result<std::shared_ptr<const auth::KeySet>> keys = auth::KeySet::build(Secret, {});
    if (keys) {
        tenant->keys = *keys;
    }
    tenant->maxConcurrentUsers = 200;
    tenant->maxEventsPerSecond = 100;
    tenant->maxJoinsPerSecond = 100;
    tenant->maxPresenceEventsPerSecond = 1000;
    tenant->maxPayloadSizeInKb = 3000;
    return tenant;
}

cluster::ConfigSnapshot snapshotOf(const QList<std::pair<QString, QByteArray>> &entries,
                                   qint64 revision)
{
    cluster::ConfigSnapshot snapshot;
    snapshot.revision = revision;
    for (const auto &[key, value] : entries) {
        snapshot.entries.insert(key, cluster::ConfigEntry{ key, value, revision, false });
    }
    return snapshot;
}

} // namespace

class ConfigEffectTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void suspendFlagStopsNewConnections();
    void limitOverrideChangesTheConnectCheck();
    void limitOverrideRestartsRateCounters();
    void badEntryDoesNotBlockTheRest();

private:
    gateway::ConnectGate::Decision connect(const QByteArray &tenant)
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
        request.headers.append({ "host", tenant + ".localhost" });
        request.upgrade = true;
        return m_gate->check(request);
    }
    QList<QByteArray> apply(const cluster::ConfigSnapshot &snapshot)
    {
        return node::applyTenantOverrides(
                node::parseClusterSettings(snapshot), m_directory, m_rates,
                [this](const QByteArray &externalId) { m_disconnected.append(externalId); });
    }

    SystemClock m_clock;
    tenants::TenantDirectory m_directory;
    tenants::TenantUsageRegistry m_usage;
    limits::RateCounterRegistry m_counters;
    tenants::TenantRates m_rates{ m_counters };
    metrics::Registry m_metricsRegistry;
    metrics::ServerMetrics m_metrics{ m_metricsRegistry };
    std::unique_ptr<gateway::ConnectGate> m_gate;
    QList<QByteArray> m_disconnected;
};

void ConfigEffectTest::init()
{
    m_directory.replaceAll({ storedTenant("acme"), storedTenant("other") });
    (void)m_directory.setLimitOverrides({});
    m_usage.usage("acme")->connectedUsers.store(0);
    m_disconnected.clear();
    m_gate = std::make_unique<gateway::ConnectGate>(gateway::ConnectSettings{}, m_directory,
                                                    m_usage, m_rates, m_metrics, m_clock);
}

void ConfigEffectTest::suspendFlagStopsNewConnections()
{
    QVERIFY(connect("acme").accepted);

    QCOMPARE(apply(snapshotOf({ { QStringLiteral("tenant_flags.acme"), R"({"suspend": true})" } },
                              5)),
             QList<QByteArray>{ "acme" });
    QCOMPARE(m_disconnected, QList<QByteArray>{ "acme" }); // its clients go
    const gateway::ConnectGate::Decision refused = connect("acme");
    QVERIFY(!refused.accepted);
    QCOMPARE(refused.refusal.status, 403);
    QCOMPARE(refused.refusal.body,
             QByteArray(R"({"error":"Realtime was disabled for this tenant"})"));
    QVERIFY(connect("other").accepted); // only that tenant
    QVERIFY(!m_directory.findStored("acme")->suspend); // the database row is untouched

    // The key deleted (or its lease expired): the tenant serves again.
    m_disconnected.clear();
    QCOMPARE(apply(snapshotOf({}, 6)), QList<QByteArray>{ "acme" });
    QCOMPARE(m_disconnected, QList<QByteArray>{ "acme" });
    QVERIFY(connect("acme").accepted);
}

void ConfigEffectTest::limitOverrideChangesTheConnectCheck()
{
    m_usage.usage("acme")->connectedUsers.store(3);
    QVERIFY(connect("acme").accepted);

    (void)apply(snapshotOf(
            { { QStringLiteral("tenant_limits.acme"), R"({"max_concurrent_users": 3})" } }, 7));
    QVERIFY(m_disconnected.isEmpty()); // a limit change keeps the connected clients
    const gateway::ConnectGate::Decision refused = connect("acme");
    QVERIFY(!refused.accepted);
    QCOMPARE(refused.refusal.status, 429);
    QCOMPARE(refused.refusal.body, QByteArray(R"({"error":"Too many connected users"})"));

    (void)apply(snapshotOf({}, 8));
    QVERIFY(connect("acme").accepted);
}

void ConfigEffectTest::limitOverrideRestartsRateCounters()
{
    const std::shared_ptr<limits::RateCounter> events = m_rates.events(*m_directory.find("acme"));
    QCOMPARE(events->options().limit->value, 100.0);

    (void)apply(snapshotOf(
            { { QStringLiteral("tenant_limits.acme"), R"({"max_events_per_second": 2500})" } }, 9));
    // Holders keep their counter; its limit is the override now.
    QCOMPARE(events->options().limit->value, 2500.0);
    QCOMPARE(m_rates.events(*m_directory.find("acme"))->options().limit->value, 2500.0);

    (void)apply(snapshotOf({}, 10));
    QCOMPARE(events->options().limit->value, 100.0);
}

void ConfigEffectTest::badEntryDoesNotBlockTheRest()
{
    const QList<QByteArray> changed = apply(snapshotOf(
            {
                    { QStringLiteral("tenant_limits.acme"), R"({"max_concurrent_users": "3"})" },
                    { QStringLiteral("tenant_flags.other"), R"({"suspend": true})" },
            },
            11));
    QCOMPARE(changed, QList<QByteArray>{ "other" });
    QCOMPARE(m_directory.find("acme")->maxConcurrentUsers, 200);
    QVERIFY(!connect("other").accepted);
    QVERIFY(connect("acme").accepted);
}

QTEST_GUILESS_MAIN(ConfigEffectTest)
#include "tst_config_effect.moc"
