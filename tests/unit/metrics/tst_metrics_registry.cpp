#include "server/metrics/catalog.h"
#include "server/metrics/registry.h"
#include "server/metrics/text_format.h"
#include "tests/support/metrics/prometheus_text.h"

#include <QRegularExpression>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

using namespace rt::metrics;
using rt::test::Exposition;
using rt::test::Labels;

namespace {

QByteArray tenantName(int index)
{
    QByteArray name("tenant-");
    name.append(QByteArray::number(index));
    return name;
}

QByteArray lines(std::initializer_list<const char *> parts)
{
    QByteArray text;
    for (const char *part : parts) {
        text.append(part);
        text.append('\n');
    }
    return text;
}

Exposition parsed(const QByteArray &text)
{
    auto result = rt::test::parseExposition(text);
    if (!result) {
        qWarning("%s\n%s", qUtf8Printable(result.error().message), text.constData());
        return {};
    }
    return std::move(result).value();
}

} // namespace

// Registry and families: exact text for each type, label order and escaping, removal, callback
// gauges, declaration checks, concurrent updates, the catalog, and a parse of every rendering.
class TestMetricsRegistry : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void rendersCounters();
    void rendersGauges();
    void rendersHistograms();
    void rendersLabelledHistograms();
    void sortsGlobalAndFamilyLabelsByName();
    void escapesHelpAndLabelValues();
    void omitsFamiliesWithoutSeries();
    void removesSeries();
    void removesSeriesOfADeletedTenantAcrossFamilies();
    void removesFamilies();
    void rendersCallbackGauges();
    void rejectsBadDeclarations();
    void detachesSeriesWithTheWrongNumberOfLabels();
    void sumsConcurrentUpdates();
    void roundTripsThroughTheParser();
    void declaresTheCatalog();
    void splitsTheCatalogByScope();
};

void TestMetricsRegistry::rendersCounters()
{
    Registry registry;
    CounterFamily &requests =
            registry.counterFamily({ "requests_total", "Requests.", { "tenant", "code" }, {} });
    requests.labels({ "t2", "500" })->inc(2);
    const auto ok = requests.labels({ "t1", "200" });
    ok->inc();
    ok->inc(41);
    registry.counter("aaa_total", "First.").inc(5);
    QCOMPARE(requests.size(), 2);
    QCOMPARE(registry.render(),
             lines({
                     "# HELP aaa_total First.",
                     "# TYPE aaa_total counter",
                     "aaa_total 5",
                     "# HELP requests_total Requests.",
                     "# TYPE requests_total counter",
                     "requests_total{code=\"200\",tenant=\"t1\"} 42",
                     "requests_total{code=\"500\",tenant=\"t2\"} 2",
             }));
}

void TestMetricsRegistry::rendersGauges()
{
    Registry registry;
    Gauge &idle = registry.gauge("idle", "Never set.");
    Q_UNUSED(idle);
    GaugeFamily &connected = registry.gaugeFamily({ "connected", "Connected.", { "tenant" }, {} });
    connected.labels({ "a" })->set(-1.5);
    const auto b = connected.labels({ "b" });
    b->inc();
    b->inc(2);
    b->dec(0.75);
    b->add(0.5);
    QCOMPARE(b->value(), 2.75);
    QCOMPARE(registry.render(),
             lines({
                     "# HELP connected Connected.",
                     "# TYPE connected gauge",
                     "connected{tenant=\"a\"} -1.5",
                     "connected{tenant=\"b\"} 2.75",
                     "# HELP idle Never set.",
                     "# TYPE idle gauge",
                     "idle 0",
             }));
}

void TestMetricsRegistry::rendersHistograms()
{
    Registry registry;
    Histogram &latency = registry.histogram("latency", "Latency.", { 1, 2.5, 1000 });
    latency.observe(0.5);
    latency.observe(1); // == bound: counted in le="1.0" (Prometheus semantics)
    latency.observe(3);
    latency.observe(5000);
    latency.observe(std::nan("")); // ignored
    QCOMPARE(latency.count(), quint64(4));
    QCOMPARE(latency.sum(), 5004.5);
    QCOMPARE(latency.cumulativeCounts(), (std::vector<quint64>{ 2, 2, 3, 4 }));
    QCOMPARE(registry.render(),
             lines({
                     "# HELP latency Latency.",
                     "# TYPE latency histogram",
                     "latency_bucket{le=\"1.0\"} 2",
                     "latency_bucket{le=\"2.5\"} 2",
                     "latency_bucket{le=\"1.0e3\"} 3",
                     "latency_bucket{le=\"+Inf\"} 4",
                     "latency_sum 5004.5",
                     "latency_count 4",
             }));
}

void TestMetricsRegistry::rendersLabelledHistograms()
{
    Registry registry;
    const double inf = std::numeric_limits<double>::infinity();
    HistogramFamily &sizes = registry.histogramFamily(
            { "payload_size", "Size.", { "tenant", "message_type" }, { 250, 500, inf } });
    QCOMPARE(sizes.info().buckets, (std::vector<double>{ 250, 500 })); // +Inf is implicit
    sizes.labels({ "t", "presence" })->observe(600);
    const auto broadcast = sizes.labels({ "t", "broadcast" });
    broadcast->observe(10);
    broadcast->observe(250);
    QCOMPARE(registry.render(),
             lines({
                     "# HELP payload_size Size.",
                     "# TYPE payload_size histogram",
                     "payload_size_bucket{message_type=\"broadcast\",tenant=\"t\",le=\"250.0\"} 2",
                     "payload_size_bucket{message_type=\"broadcast\",tenant=\"t\",le=\"500.0\"} 2",
                     "payload_size_bucket{message_type=\"broadcast\",tenant=\"t\",le=\"+Inf\"} 2",
                     "payload_size_sum{message_type=\"broadcast\",tenant=\"t\"} 260",
                     "payload_size_count{message_type=\"broadcast\",tenant=\"t\"} 2",
                     "payload_size_bucket{message_type=\"presence\",tenant=\"t\",le=\"250.0\"} 0",
                     "payload_size_bucket{message_type=\"presence\",tenant=\"t\",le=\"500.0\"} 0",
                     "payload_size_bucket{message_type=\"presence\",tenant=\"t\",le=\"+Inf\"} 1",
                     "payload_size_sum{message_type=\"presence\",tenant=\"t\"} 600",
                     "payload_size_count{message_type=\"presence\",tenant=\"t\"} 1",
             }));
}

void TestMetricsRegistry::sortsGlobalAndFamilyLabelsByName()
{
    Registry registry({ { "region", "eu-west-1" }, { "host", "node-a" }, { "id", "a1" } });
    registry.counterFamily({ "events", "Events.", { "tenant", "message_type" }, {} })
            .labels({ "t", "broadcast" })
            ->inc();
    registry.histogram("rpc", "RPC.", { 10 }).observe(1);
    registry.gauge("up", "Up.").set(1);
    QCOMPARE(registry.render(),
             lines({
                     "# HELP events Events.",
                     "# TYPE events counter",
                     "events{host=\"node-a\",id=\"a1\",message_type=\"broadcast\",region=\"eu-west-"
                     "1\",tenant=\"t\"} 1",
                     "# HELP rpc RPC.",
                     "# TYPE rpc histogram",
                     "rpc_bucket{host=\"node-a\",id=\"a1\",region=\"eu-west-1\",le=\"10.0\"} 1",
                     "rpc_bucket{host=\"node-a\",id=\"a1\",region=\"eu-west-1\",le=\"+Inf\"} 1",
                     "rpc_sum{host=\"node-a\",id=\"a1\",region=\"eu-west-1\"} 1",
                     "rpc_count{host=\"node-a\",id=\"a1\",region=\"eu-west-1\"} 1",
                     "# HELP up Up.",
                     "# TYPE up gauge",
                     "up{host=\"node-a\",id=\"a1\",region=\"eu-west-1\"} 1",
             }));
}

void TestMetricsRegistry::escapesHelpAndLabelValues()
{
    Registry registry(LabelPairs{ { "region", "a\"b" } });
    CounterFamily &errors = registry.counterFamily(
            { "errors", "Line one\nline \\two\\ \"quoted\"", { "code" }, {} });
    errors.labels({ "back\\slash \"quote\"\nnewline" })->inc();
    errors.labels({ QByteArrayView("bad \xff byte") })->inc(); // invalid UTF-8 -> U+FFFD
    registry.counter("no_help", "").inc();
    QCOMPARE(registry.render(),
             lines({
                     "# HELP errors Line one\\nline \\\\two\\\\ \"quoted\"",
                     "# TYPE errors counter",
                     "errors{code=\"back\\\\slash \\\"quote\\\"\\nnewline\",region=\"a\\\"b\"} 1",
                     "errors{code=\"bad \xef\xbf\xbd byte\",region=\"a\\\"b\"} 1",
                     "# HELP no_help ", // upstream: trailing space when there is no description
                     "# TYPE no_help counter",
                     "no_help{region=\"a\\\"b\"} 1",
             }));
}

void TestMetricsRegistry::omitsFamiliesWithoutSeries()
{
    Registry registry;
    QCOMPARE(registry.render(), QByteArray());
    registry.counterFamily({ "labelled", "L.", { "tenant" }, {} });
    registry.histogramFamily({ "labelled_histogram", "H.", { "tenant" }, { 1 } });
    QCOMPARE(registry.render(), QByteArray());
    QCOMPARE(registry.families().size(), std::size_t(2));
}

void TestMetricsRegistry::removesSeries()
{
    Registry registry;
    CounterFamily &joins = registry.counterFamily({ "joins", "J.", { "tenant" }, {} });
    const auto held = joins.labels({ "gone" });
    held->inc(7);
    joins.labels({ "kept" })->inc();
    QVERIFY(joins.remove({ "gone" }));
    QVERIFY(!joins.remove({ "gone" }));
    QVERIFY(!joins.remove({ "never" }));
    QCOMPARE(joins.size(), 1);
    // A worker still holding the pointer keeps a detached, unrendered series.
    held->inc();
    QCOMPARE(held->value(), quint64(8));
    QVERIFY(!registry.render().contains("gone"));
    // The same labels later start a fresh series.
    joins.labels({ "gone" })->inc();
    QVERIFY(registry.render().contains("joins{tenant=\"gone\"} 1\n"));
    QCOMPARE(joins.labels({ "gone" })->value(), quint64(1));
    joins.clear();
    QCOMPARE(joins.size(), 0);
    QCOMPARE(registry.render(), QByteArray());

    // A family without labels keeps its single series.
    Counter &total = registry.counter("total", "T.");
    total.inc();
    QVERIFY(!registry.counterFamily({ "pinned", "P.", {}, {} }).remove({}));
    QCOMPARE(registry.render(),
             lines({ "# HELP pinned P.", "# TYPE pinned counter", "pinned 0", "# HELP total T.",
                     "# TYPE total counter", "total 1" }));
}

void TestMetricsRegistry::removesSeriesOfADeletedTenantAcrossFamilies()
{
    Registry registry;
    CounterFamily &events = registry.counterFamily({ "events", "E.", { "tenant" }, {} });
    HistogramFamily &sizes =
            registry.histogramFamily({ "sizes", "S.", { "message_type", "tenant" }, { 10 } });
    GaugeFamily &other = registry.gaugeFamily({ "by_code", "C.", { "code" }, {} });
    events.labels({ "dead" })->inc();
    events.labels({ "alive" })->inc();
    sizes.labels({ "broadcast", "dead" })->observe(1);
    sizes.labels({ "presence", "dead" })->observe(1);
    sizes.labels({ "presence", "alive" })->observe(1);
    other.labels({ "dead" })->set(1); // label "code", not "tenant": stays
    QCOMPARE(registry.removeSeries("tenant", "dead"), 3);
    QCOMPARE(registry.removeSeries("tenant", "dead"), 0);
    QCOMPARE(registry.removeSeries("no_such_label", "alive"), 0);
    const QByteArray text = registry.render();
    QVERIFY2(!text.contains("tenant=\"dead\""), text.constData());
    QVERIFY(text.contains("events{tenant=\"alive\"} 1"));
    QVERIFY(text.contains("sizes_count{message_type=\"presence\",tenant=\"alive\"} 1"));
    QVERIFY(text.contains("by_code{code=\"dead\"} 1"));
}

void TestMetricsRegistry::removesFamilies()
{
    Registry registry;
    Counter &kept = registry.counter("kept", "K.");
    Counter &dropped = registry.counter("dropped", "D.");
    std::atomic<int> calls{ 0 };
    registry.callbackGauge("sampled", "S.", [&calls] { return double(++calls); });
    QVERIFY(registry.render().contains("sampled 1\n"));
    QVERIFY(registry.removeFamily("dropped"));
    QVERIFY(registry.removeFamily("sampled"));
    QVERIFY(!registry.removeFamily("sampled"));
    QVERIFY(!registry.removeFamily("unknown"));
    dropped.inc(); // the reference stays valid
    kept.inc();
    QCOMPARE(registry.render(), lines({ "# HELP kept K.", "# TYPE kept counter", "kept 1" }));
    QCOMPARE(calls.load(), 1); // disarmed: not called again
    QVERIFY(!registry.info("dropped"));
    // The name may be declared again.
    registry.counter("dropped", "Again.").inc(3);
    QVERIFY(registry.render().contains("dropped 3\n"));
}

void TestMetricsRegistry::rendersCallbackGauges()
{
    Registry registry(LabelPairs{ { "host", "h" } });
    double connected = 3;
    registry.callbackGauge("connected_total", "Connected.", [&connected] { return connected; });
    registry.callbackGaugeFamily({ "per_tenant", "Per tenant.", { "tenant" }, {} },
                                 [](CallbackSamples &samples) {
                                     samples.add({ "b" }, 1);
                                     samples.add({ "a" }, 2);
                                     samples.add({ "b" }, 5); // the last one wins
                                     samples.add({ "x", "y" }, 9); // wrong arity: dropped
                                 });
    registry.callbackGaugeFamily({ "nothing", "N.", { "tenant" }, {} }, [](CallbackSamples &) {});
    QVERIFY(registry.info("per_tenant")->isCallback);
    QCOMPARE(registry.info("per_tenant")->type, MetricType::Gauge);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("per_tenant.*label")));
    QCOMPARE(registry.render(),
             lines({
                     "# HELP connected_total Connected.",
                     "# TYPE connected_total gauge",
                     "connected_total{host=\"h\"} 3",
                     "# HELP per_tenant Per tenant.",
                     "# TYPE per_tenant gauge",
                     "per_tenant{host=\"h\",tenant=\"a\"} 2",
                     "per_tenant{host=\"h\",tenant=\"b\"} 5",
             }));
    connected = 4; // sampled at every render
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("per_tenant.*label")));
    QVERIFY(registry.render().contains("connected_total{host=\"h\"} 4\n"));
}

void TestMetricsRegistry::rejectsBadDeclarations()
{
    Registry registry(LabelPairs{ { "host", "h" } });
    registry.counter("taken", "T.");
    registry.histogram("hist", "H.", { 1 });
    registry.counter("c_sum", "Counter whose name a histogram would produce.");
    const auto rejected = [&](MetricType type, const FamilySpec &spec) {
        const auto error = registry.checkDeclaration(type, spec);
        if (error)
            qDebug("%s", qUtf8Printable(error->message));
        return error.has_value();
    };
    using enum MetricType;
    QVERIFY(!rejected(Counter, { "fine", "F.", { "tenant", "code" }, {} }));
    QVERIFY(!rejected(Histogram, { "fine_h", "F.", { "tenant" }, { 1, 2, 3 } }));
    QVERIFY(rejected(Counter, { "1bad", "", {}, {} }));
    QVERIFY(rejected(Counter, { "bad-name", "", {}, {} }));
    QVERIFY(rejected(Counter, { "x", "", { "__reserved" }, {} }));
    QVERIFY(rejected(Counter, { "x", "", { "bad-label" }, {} }));
    QVERIFY(rejected(Counter, { "x", "", { "tenant", "tenant" }, {} }));
    QVERIFY(rejected(Counter, { "x", "", { "host" }, {} })); // a global label
    QVERIFY(!rejected(Counter, { "x", "", { "le" }, {} })); // only reserved on histograms
    QVERIFY(rejected(Histogram, { "x", "", { "le" }, { 1 } }));
    QVERIFY(rejected(Counter, { "x", "", {}, { 1 } })); // buckets on a counter
    QVERIFY(rejected(Histogram, { "x", "", {}, { 2, 1 } }));
    QVERIFY(rejected(Histogram, { "x", "", {}, { 1, 1 } }));
    QVERIFY(rejected(Histogram, { "x", "", {}, { std::nan("") } }));
    QVERIFY(rejected(Histogram, { "x", "", {}, { -std::numeric_limits<double>::infinity(), 1 } }));
    QVERIFY(rejected(Counter, { "taken", "", {}, {} }));
    QVERIFY(rejected(Gauge, { "hist_count", "", {}, {} })); // a histogram's series
    QVERIFY(rejected(Counter, { "hist_bucket", "", {}, {} }));
    QVERIFY(rejected(Histogram, { "c", "", {}, { 1 } })); // would render c_sum
    QVERIFY(!rejected(Counter, { "taken_sum", "", {}, {} })); // "taken" is no histogram
}

void TestMetricsRegistry::detachesSeriesWithTheWrongNumberOfLabels()
{
    Registry registry;
    CounterFamily &family = registry.counterFamily({ "pairs", "P.", { "a", "b" }, {} });
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("^pairs: labels\\(\\)")));
    const auto detached = family.labels({ "only one" });
    QVERIFY(detached);
    detached->inc();
    family.labels({ "1", "2", "3" })->inc(); // reported once per family
    QCOMPARE(family.size(), 0);
    QCOMPARE(registry.render(), QByteArray());
    QCOMPARE(family.labels(QList<QByteArray>{ "x", "y" })->value(), quint64(0));
    QCOMPARE(family.size(), 1);
}

void TestMetricsRegistry::sumsConcurrentUpdates()
{
    Registry registry;
    CounterFamily &counters = registry.counterFamily({ "events", "E.", { "tenant" }, {} });
    HistogramFamily &histograms =
            registry.histogramFamily({ "latency", "L.", { "tenant" }, { 1, 10, 100 } });
    Gauge &gauge = registry.gauge("in_flight", "I.");
    Counter &global = registry.counter("global_events", "G.");

    constexpr int Threads = 4;
    constexpr int Iterations = 50000;
    std::atomic<bool> stop{ false };
    std::thread scraper([&] {
        // Renders, and churns an unrelated tenant's series, while the workers count.
        int round = 0;
        while (!stop.load()) {
            const QByteArray text = registry.render();
            const auto result = rt::test::parseExposition(text);
            if (!result || !rt::test::checkConsistency(*result).isEmpty())
                qFatal("inconsistent scrape: %s", text.constData());
            counters.labels({ "churn" })->inc();
            registry.removeSeries("tenant", "churn");
            ++round;
        }
        qDebug("%d scrapes during the run", round);
    });
    std::vector<std::thread> workers;
    for (int t = 0; t < Threads; ++t) {
        workers.emplace_back([&, t] {
            const QByteArray own = tenantName(t);
            const auto mine = counters.labels({ own });
            for (int i = 0; i < Iterations; ++i) {
                mine->inc();
                counters.labels({ "shared" })->inc(); // looked up every time
                histograms.labels({ "shared" })->observe(double(i % 200));
                gauge.inc();
                gauge.dec();
                global.inc(2);
            }
        });
    }
    for (std::thread &worker : workers)
        worker.join();
    stop = true;
    scraper.join();

    const quint64 total = quint64(Threads) * Iterations;
    QCOMPARE(counters.labels({ "shared" })->value(), total);
    for (int t = 0; t < Threads; ++t)
        QCOMPARE(counters.labels({ tenantName(t) })->value(), quint64(Iterations));
    QCOMPARE(global.value(), 2 * total);
    QCOMPARE(gauge.value(), 0.0);
    const auto shared = histograms.labels({ "shared" });
    QCOMPARE(shared->count(), total);
    // i % 200: per 200 observations, 2 are <= 1, 11 are <= 10, 101 are <= 100.
    const quint64 cycles = total / 200;
    QCOMPARE(shared->cumulativeCounts(),
             (std::vector<quint64>{ 2 * cycles, 11 * cycles, 101 * cycles, total }));
    QCOMPARE(shared->sum(), double(cycles) * (199.0 * 200.0 / 2.0)); // exact in a double

    const Exposition scrape = parsed(registry.render());
    QCOMPARE(scrape.value("events", { { "tenant", "shared" } }), std::optional<double>(total));
    QCOMPARE(scrape.value("latency_count", { { "tenant", "shared" } }),
             std::optional<double>(total));
}

void TestMetricsRegistry::roundTripsThroughTheParser()
{
    Registry registry({ { "host", "node-a" }, { "region", "" } });
    CounterFamily &errors = registry.counterFamily({ "realtime_channel_error",
                                                     "Errors,\nwith \\ and \"quotes\".",
                                                     { "tenant", "code" },
                                                     {} });
    const QByteArray awkward("ten\"ant\\with\nnewline, comma} and = sign");
    errors.labels({ awkward, "ConnectionRateLimitReached" })->inc(3);
    errors.labels({ "plain", "" })->inc();
    registry.gaugeFamily({ "ratio", "R.", { "tenant" }, {} }).labels({ "t" })->set(0.125);
    registry.gauge("negative", "N.").set(-2e-7);
    registry.gauge("unbounded", "U.").set(std::numeric_limits<double>::infinity());
    HistogramFamily &sizes = registry.histogramFamily(
            { "payload", "P.", { "message_type" }, { 250, 1000, 3000000 } });
    sizes.labels({ "broadcast" })->observe(999.5);
    sizes.labels({ "broadcast" })->observe(4e6);
    registry.callbackGaugeFamily({ "sampled", "S.", { "tenant" }, {} },
                                 [&](CallbackSamples &samples) { samples.add({ awkward }, 7); });

    const QByteArray text = registry.render();
    const auto result = rt::test::parseExposition(text);
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error().message));
    const Exposition &scrape = *result;
    const QStringList problems = rt::test::checkConsistency(scrape);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));

    QCOMPARE(scrape.help.at("realtime_channel_error"),
             QByteArray("Errors,\nwith \\ and \"quotes\"."));
    QCOMPARE(scrape.types.at("realtime_channel_error"), QByteArray("counter"));
    QCOMPARE(scrape.types.at("payload"), QByteArray("histogram"));
    QCOMPARE(scrape.types.at("sampled"), QByteArray("gauge"));
    const Labels awkwardLabels{ { "code", "ConnectionRateLimitReached" },
                                { "host", "node-a" },
                                { "region", "" },
                                { "tenant", awkward } };
    const auto found = scrape.find("realtime_channel_error", { { "tenant", awkward } });
    QCOMPARE(found.size(), std::size_t(1));
    QCOMPARE(found.front()->labels, awkwardLabels);
    QCOMPARE(found.front()->value, 3.0);
    QCOMPARE(scrape.value("realtime_channel_error", { { "tenant", "plain" }, { "code", "" } }),
             std::optional<double>(1));
    QCOMPARE(scrape.value("ratio"), std::optional<double>(0.125));
    QCOMPARE(scrape.value("negative"), std::optional<double>(-2e-7));
    QVERIFY(std::isinf(*scrape.value("unbounded")));
    QCOMPARE(scrape.value("payload_bucket", { { "le", "1.0e3" } }), std::optional<double>(1));
    QCOMPARE(scrape.value("payload_bucket", { { "le", "3.0e6" } }), std::optional<double>(1));
    QCOMPARE(scrape.value("payload_bucket", { { "le", "+Inf" } }), std::optional<double>(2));
    QCOMPARE(scrape.value("payload_sum"), std::optional<double>(4000999.5));
    QCOMPARE(scrape.value("sampled", { { "tenant", awkward } }), std::optional<double>(7));
    QCOMPARE(scrape.familyOf("payload_bucket"), QByteArray("payload"));
    // Every series once: 2 + 1 + 1 + 1 + (4 buckets + sum + count) + 1.
    QCOMPARE(scrape.samples.size(), std::size_t(12));
}

void TestMetricsRegistry::declaresTheCatalog()
{
    const std::vector<CatalogEntry> &entries = catalog();
    QVERIFY(entries.size() >= 39);
    Registry probe({ { "host", "h" }, { "id", "i" }, { "region", "r" } });
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const CatalogEntry &entry = entries[i];
        const auto error = probe.checkDeclaration(entry.type, entry.spec);
        QVERIFY2(!error, qPrintable(error ? error->message : QString()));
        if (i > 0)
            QVERIFY(entries[i - 1].spec.name < entry.spec.name);
        QVERIFY2(!entry.spec.help.isEmpty(), entry.spec.name.constData());
        if (!entry.spec.labelNames.empty() && entry.spec.labelNames.front() != "tenant")
            QVERIFY(std::find(entry.spec.labelNames.begin(), entry.spec.labelNames.end(), "tenant")
                    == entry.spec.labelNames.end());
        QCOMPARE(entry.scope == Scope::Tenant,
                 std::find(entry.spec.labelNames.begin(), entry.spec.labelNames.end(), "tenant")
                         != entry.spec.labelNames.end());
    }
    // Upstream's exact names, types and HELP texts (docs §6.3), spot-checked.
    const auto joins = catalogEntry(names::ChannelJoins);
    QVERIFY(joins);
    QCOMPARE(joins->type, MetricType::Counter);
    QCOMPARE(joins->spec.help, QByteArray("Sum of Realtime Channel joins."));
    QCOMPARE(joins->spec.labelNames, std::vector<QByteArray>{ "tenant" });
    const auto connected = catalogEntry("realtime_connections_connected");
    QCOMPARE(connected->type, MetricType::Gauge);
    QCOMPARE(connected->spec.help,
             QByteArray("The node total count of connected clients for a tenant."));
    const auto tenants = catalogEntry("realtime_tenants_connected");
    QCOMPARE(tenants->spec.help, QByteArray("The total count of connected tenants."));
    QVERIFY(tenants->spec.labelNames.empty());
    const auto payload = catalogEntry("realtime_tenants_payload_size");
    QCOMPARE(payload->type, MetricType::Histogram);
    QCOMPARE(payload->spec.buckets,
             (std::vector<double>{ 250, 500, 1000, 3000, 5000, 10000, 25000, 100000, 500000,
                                   1000000, 3000000 }));
    QVERIFY(!catalogEntry("realtime_no_such_metric"));

    Registry registry({ { "host", "h" }, { "id", "i" }, { "region", "r" } });
    ServerMetrics metrics(registry);
    QCOMPARE(registry.families().size(), entries.size());
    metrics.channelJoins.labels({ "tenant-a" })->inc();
    metrics.channelGlobalJoins.inc();
    metrics.tenantsConnected.set(-1);
    metrics.tenantsPayloadSize.labels({ "tenant-a", label_values::Broadcast })->observe(300);
    metrics.rateLimitRejections.labels({ "tenant-a", label_values::Joins })->inc();
    metrics.fanoutLatency.labels({ label_values::Presence })->observe(0.3);
    metrics.slowConsumerDisconnects.labels({ "tenant-a" })->inc();
    const QByteArray text = registry.render();
    const Exposition scrape = parsed(text);
    QVERIFY2(rt::test::checkConsistency(scrape).isEmpty(), text.constData());
    const Labels tenantA{
        { "tenant", "tenant-a" }, { "host", "h" }, { "id", "i" }, { "region", "r" }
    };
    QCOMPARE(scrape.value("realtime_channel_joins", tenantA), std::optional<double>(1));
    QCOMPARE(scrape.value("realtime_channel_global_joins"), std::optional<double>(1));
    QCOMPARE(scrape.value("realtime_tenants_connected"), std::optional<double>(-1));
    QCOMPARE(scrape.value("realtime_tenants_payload_size_bucket",
                          { { "message_type", "broadcast" }, { "le", "500.0" } }),
             std::optional<double>(1));
    QCOMPARE(scrape.value("qtrealtime_rate_limit_rejections_total", { { "kind", "joins" } }),
             std::optional<double>(1));
    QCOMPARE(scrape.value("qtrealtime_fanout_latency_milliseconds_bucket",
                          { { "message_type", "presence" }, { "le", "0.5" } }),
             std::optional<double>(1));
    QCOMPARE(scrape.help.at("realtime_channel_joins"),
             QByteArray("Sum of Realtime Channel joins."));
    // Deleting the tenant drops all of its series.
    QCOMPARE(registry.removeSeries("tenant", "tenant-a"), 4);
    QVERIFY(!registry.render().contains("tenant-a"));
}

void TestMetricsRegistry::splitsTheCatalogByScope()
{
    Registry global;
    Registry tenant;
    ServerMetrics metrics(global, tenant);
    for (const CatalogEntry &entry : catalog()) {
        const bool inGlobal = global.info(entry.spec.name).has_value();
        QVERIFY2(inGlobal == (entry.scope == Scope::Global), entry.spec.name.constData());
        QVERIFY2(tenant.info(entry.spec.name).has_value() == !inGlobal,
                 entry.spec.name.constData());
    }
    metrics.channelEvents.labels({ "t" })->inc();
    metrics.channelGlobalEvents.inc();
    QVERIFY(tenant.render().contains("realtime_channel_events{tenant=\"t\"} 1\n"));
    QVERIFY(!tenant.render().contains("realtime_channel_global_events"));
    QVERIFY(global.render().contains("realtime_channel_global_events 1\n"));
}

QTEST_GUILESS_MAIN(TestMetricsRegistry)
#include "tst_metrics_registry.moc"
