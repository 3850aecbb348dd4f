#include "server/auth/jwt.h"
#include "tests/support/metrics/prometheus_text.h"
#include "tests/support/server/phoenix_client.h"
#include "tests/support/server/raw_http.h"
#include "tests/support/server/test_server.h"

#include <QDateTime>
#include <QJsonObject>
#include <QTest>

using namespace rt;
using rt::testsupport::exchange;
using rt::testsupport::PhoenixClient;
using rt::testsupport::RawResponse;
using rt::testsupport::TestServer;

namespace {

const QByteArray MetricsSecret = QByteArrayLiteral("metrics-secret-0123456789abcdefghijklmn");

TestServer::Options metricsOptions()
{
    TestServer::Options options;
    options.metricsJwtSecret = MetricsSecret;
    options.workers = 2;
    return options;
}

QByteArray scrapeRequest(const QByteArray &path, const QByteArray &authorization)
{
    QByteArray request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (!authorization.isEmpty()) {
        request += "Authorization: " + authorization + "\r\n";
    }
    return request + "\r\n";
}

QByteArray bearer(const QByteArray &secret)
{
    return "Bearer " + auth::signHmac(QJsonObject{}, secret);
}

} // namespace

class MetricsEndpointTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void refusesWithoutTheMetricsToken();
    void servesParsableUpstreamAndOwnFamilies();
    void countsTrafficOfATenant();

private:
    RawResponse scrape(const QByteArray &path = QByteArrayLiteral("/metrics"))
    {
        return exchange(m_server.port(), scrapeRequest(path, bearer(MetricsSecret)));
    }
    test::Exposition parse(const RawResponse &response)
    {
        Result<test::Exposition> parsed = test::parseExposition(response.body);
        if (!parsed) {
            qWarning("%s", qPrintable(parsed.error().message));
            return {};
        }
        return *std::move(parsed);
    }

    TestServer m_server{ metricsOptions() };
};

void MetricsEndpointTest::initTestCase()
{
    QVERIFY2(m_server.start(), qPrintable(m_server.failure()));
}

void MetricsEndpointTest::refusesWithoutTheMetricsToken()
{
    for (const QByteArray &authorization :
         { QByteArray(), bearer("wrong-secret"), QByteArray("bearer x"),
           // The tenant API's secret is not the metrics secret.
           bearer(m_server.secret()) }) {
        const RawResponse response =
                exchange(m_server.port(), scrapeRequest("/metrics", authorization));
        QCOMPARE(response.status, 403);
        QVERIFY(response.body.isEmpty());
    }
}

void MetricsEndpointTest::servesParsableUpstreamAndOwnFamilies()
{
    const RawResponse response = scrape();
    QCOMPARE(response.status, 200);
    QVERIFY(response.header("content-type").startsWith("text/plain; version=0.0.4"));
    const Result<test::Exposition> parsed = test::parseExposition(response.body);
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : qPrintable(parsed.error().message));
    const QStringList problems = test::checkConsistency(*parsed);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(u'\n')));
    // Families with series right away (unlabelled upstream gauges and counters).
    for (const char *name : { "realtime_connections_global_connected", "realtime_tenants_connected",
                              "realtime_channel_global_joins", "realtime_channel_global_events" }) {
        QVERIFY2(parsed->types.count(name) == 1, name);
    }
    // /metrics/:region answers the same way on a single node.
    QCOMPARE(scrape("/metrics/local").status, 200);
}

void MetricsEndpointTest::countsTrafficOfATenant()
{
    PhoenixClient sender(m_server.socketUrl("1.0.0"));
    PhoenixClient receiver(m_server.socketUrl("1.0.0"));
    QVERIFY(sender.open());
    QVERIFY(receiver.open());
    const QByteArray join = R"({"topic":"realtime:metrics","event":"phx_join","payload":{"config":)"
                            R"({"broadcast":{"self":false}}},"ref":"1"})";
    sender.sendText(join);
    receiver.sendText(join);
    QVERIFY(!sender.waitForText("phx_reply").isEmpty());
    QVERIFY(!receiver.waitForText("phx_reply").isEmpty());
    for (int i = 0; i < 3; ++i) {
        sender.sendText(R"({"topic":"realtime:metrics","event":"broadcast","payload":)"
                        R"({"type":"broadcast","event":"e","payload":{}},"ref":"2"})");
        QVERIFY(!receiver.waitForText("\"event\":\"e\"").isEmpty());
    }

    const test::Labels tenant{ { "tenant", "realtime-dev" } };
    test::Exposition metrics;
    // Counters fed by the rate counters' ticks (first tick immediately, then every 5 s) and
    // gauges sampled at scrape time.
    QVERIFY(QTest::qWaitFor(
            [&] {
                metrics = parse(scrape());
                return metrics.value("realtime_channel_events", tenant).value_or(0) >= 6
                        && metrics.value("realtime_channel_joins", tenant).value_or(0) >= 2;
            },
            12'000));
    QCOMPARE(metrics.value("realtime_connections_connected", tenant), std::optional<double>(2));
    QCOMPARE(metrics.value("realtime_tenants_connected"), std::optional<double>(1));
    // Ours: 2 joins + 3 broadcasts in, 3 copies delivered by fan-out.
    QVERIFY(metrics.value("qtrealtime_messages_in_total", tenant).value_or(0) >= 5);
    QCOMPARE(metrics.value("qtrealtime_messages_out_total", tenant), std::optional<double>(3));
    QVERIFY(metrics.value("qtrealtime_fanout_latency_milliseconds_count",
                          { { "message_type", "broadcast" } })
                    .value_or(0)
            >= 3);
}

QTEST_MAIN(MetricsEndpointTest)
#include "tst_metrics_endpoint.moc"
