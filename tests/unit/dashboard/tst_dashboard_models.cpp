// The dashboard's models against recorded admin snapshots: concrete cells of every model, the
// placement filter, the metric series, and that a later snapshot (a node gone, a tenant moved, a
// tenant arrived, rates changed) reaches the views as inserts, removals and dataChanged of the
// changed rows only — never a reset. Every model runs under QAbstractItemModelTester.
#include "dashboard/models/metric_series.h"
#include "dashboard/models/snapshot_models.h"

#include <QAbstractItemModelTester>
#include <QDateTime>
#include <QFile>
#include <QLocale>
#include <QMap>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace Qt::StringLiterals;
using rt::api::ClusterSnapshot;
using namespace rt::dashboard;

namespace {

ClusterSnapshot recorded(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        qFatal("cannot read %s", qPrintable(path));
    }
    auto snapshot = ClusterSnapshot::fromJson(file.readAll());
    if (!snapshot) {
        qFatal("%s: %s", qPrintable(path), qPrintable(snapshot.error().message));
    }
    return *snapshot;
}

// The cluster at 1796058000000: nodes a, b (us-east-1) and c (eu-west-1); tenants acme, globex.
ClusterSnapshot first()
{
    return recorded(QStringLiteral(RT_API_TEST_DATA "/snapshot-3-nodes.json"));
}

// A minute later: node-b gone, globex moved to node-a, initech arrived on node-c, rates changed.
ClusterSnapshot later()
{
    return recorded(QStringLiteral(RT_DASHBOARD_TEST_DATA "/snapshot-2-nodes-later.json"));
}

QString cell(const QAbstractItemModel *model, int row, int column, int role = Qt::DisplayRole)
{
    return model->index(row, column).data(role).toString();
}

QStringList column(const QAbstractItemModel *model, int columnNumber)
{
    QStringList values;
    for (int row = 0; row < model->rowCount(); ++row) {
        values.append(cell(model, row, columnNumber));
    }
    return values;
}

// Rows and columns of one range signal: "first-last:left-right".
QString range(const QList<QVariant> &arguments)
{
    const auto topLeft = arguments.at(0).value<QModelIndex>();
    const auto bottomRight = arguments.at(1).value<QModelIndex>();
    return QStringLiteral("%1-%2:%3-%4")
            .arg(topLeft.row())
            .arg(bottomRight.row())
            .arg(topLeft.column())
            .arg(bottomRight.column());
}

// Rows of an insert/remove signal: "first-last".
QString rows(const QList<QVariant> &arguments)
{
    return QStringLiteral("%1-%2").arg(arguments.at(1).toInt()).arg(arguments.at(2).toInt());
}

// Every structural signal of a model, recorded.
struct ModelSpies
{
    explicit ModelSpies(QAbstractItemModel *model)
        : inserted(model, &QAbstractItemModel::rowsInserted),
          removed(model, &QAbstractItemModel::rowsRemoved),
          changed(model, &QAbstractItemModel::dataChanged),
          reset(model, &QAbstractItemModel::modelReset),
          layout(model, &QAbstractItemModel::layoutChanged),
          moved(model, &QAbstractItemModel::rowsMoved)
    { }
    QStringList insertedRows() const { return list(inserted, &rows); }
    QStringList removedRows() const { return list(removed, &rows); }
    QStringList changedRanges() const { return list(changed, &range); }
    static QStringList list(const QSignalSpy &spy, QString (*format)(const QList<QVariant> &))
    {
        QStringList result;
        for (const QList<QVariant> &arguments : spy) {
            result.append(format(arguments));
        }
        return result;
    }
    QSignalSpy inserted;
    QSignalSpy removed;
    QSignalSpy changed;
    QSignalSpy reset;
    QSignalSpy layout;
    QSignalSpy moved;
};

} // namespace

class DashboardModelsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QLocale::setDefault(QLocale::c()); // "9800.0", not "9.800,0"
    }

    // --- MetricSeries -----------------------------------------------------------------------

    void seriesIgnoresDuplicatesAndOutOfOrderSamples()
    {
        MetricSeries series(60'000, 100);
        QVERIFY(series.isEmpty());
        QVERIFY(!series.minimum().has_value());
        QVERIFY(series.append(1000, 1.0));
        QVERIFY(!series.append(1000, 9.0)); // same time
        QVERIFY(!series.append(500, 9.0)); // older
        QVERIFY(series.append(2000, 3.0));
        QVERIFY(series.append(3000, -2.0));
        QCOMPARE(series.size(), 3);
        QCOMPARE(series.minimum(), std::optional<double>(-2.0));
        QCOMPARE(series.maximum(), std::optional<double>(3.0));
        QCOMPARE(series.first()->atMs, 1000);
        QCOMPARE(series.last()->value, -2.0);
        QCOMPARE(series.points(),
                 (QList<QPointF>{ QPointF(1000, 1.0), QPointF(2000, 3.0), QPointF(3000, -2.0) }));
    }

    void seriesSlidesItsWindow()
    {
        MetricSeries series(10'000, 100);
        for (qint64 at = 0; at <= 30'000; at += 1000) {
            series.append(at, double(at));
        }
        // Only samples within 10 s of the newest (30 s) are left: 20 s .. 30 s.
        QCOMPARE(series.size(), 11);
        QCOMPARE(series.first()->atMs, 20'000);
        QCOMPARE(series.minimum(), std::optional<double>(20'000));
        QCOMPARE(series.maximum(), std::optional<double>(30'000));
        // A jump past the window leaves only the new sample.
        series.append(100'000, 5.0);
        QCOMPARE(series.samples(), (QList<MetricSample>{ { 100'000, 5.0 } }));
    }

    void seriesIsBoundedByItsCapacity()
    {
        MetricSeries series(1'000'000, 4);
        for (qint64 at = 1; at <= 10; ++at) {
            series.append(at, double(at));
        }
        QCOMPARE(series.size(), 4);
        QCOMPARE(series.samples(),
                 (QList<MetricSample>{ { 7, 7.0 }, { 8, 8.0 }, { 9, 9.0 }, { 10, 10.0 } }));
        QCOMPARE(series.minimum(), std::optional<double>(7.0));
    }

    void seriesGrowsAfterItsWindowDroppedSamples()
    {
        // The ring wraps below capacity (samples expired from the front) and then has to grow.
        MetricSeries series(3, 100);
        for (qint64 at = 0; at < 4; ++at) {
            series.append(at, double(at)); // 0..3 within the window
        }
        series.append(5, 5.0); // drops 0 and 1: the ring's head moves
        series.append(6, 6.0);
        series.append(7, 7.0);
        series.append(8, 8.0);
        QCOMPARE(series.samples(),
                 (QList<MetricSample>{ { 5, 5.0 }, { 6, 6.0 }, { 7, 7.0 }, { 8, 8.0 } }));
        const MetricSeries copy = series; // a copy keeps its picture while the original moves on
        series.append(9, 9.0);
        QCOMPARE(copy.size(), 4);
        QCOMPARE(copy.last()->atMs, 8);
        QCOMPARE(series.last()->atMs, 9);
    }

    // --- one snapshot -----------------------------------------------------------------------

    void nodesShowTheRecordedSnapshot()
    {
        SnapshotModels models;
        models.apply(first());
        const NodesModel *nodes = models.nodes();
        QCOMPARE(nodes->rowCount(), 3);
        QCOMPARE(nodes->columnCount(), int(NodesModel::ColumnCount));
        QCOMPARE(column(nodes, NodesModel::IdColumn),
                 (QStringList{ u"node-a"_s, u"node-b"_s, u"node-c"_s }));
        QCOMPARE(column(nodes, NodesModel::RegionColumn),
                 (QStringList{ u"us-east-1"_s, u"us-east-1"_s, u"eu-west-1"_s }));
        QCOMPARE(cell(nodes, 0, NodesModel::ClientAddressColumn), QStringLiteral("10.0.0.1:4000"));
        // Uptime against taken_at: 8,000 s; 100 s; 58,000 s.
        QCOMPARE(column(nodes, NodesModel::UptimeColumn),
                 (QStringList{ u"2 h 13 min"_s, u"1 min 40 s"_s, u"16 h 6 min"_s }));
        QCOMPARE(nodes->index(0, 0).data(NodesModel::UptimeMsRole).toLongLong(), 8'000'000);
        QCOMPARE(column(nodes, NodesModel::LoadColumn),
                 (QStringList{ u"0.42"_s, u"—"_s, u"2.50"_s }));
        QCOMPARE(cell(nodes, 1, NodesModel::LoadColumn, Qt::ToolTipRole),
                 QStringLiteral("Not enough data yet"));
        QVERIFY(!nodes->index(1, 0).data(NodesModel::LoadRole).isValid());
        QCOMPARE(nodes->index(0, 0).data(NodesModel::LoadRole).toDouble(), 0.42);
        QCOMPARE(column(nodes, NodesModel::ConnectionsColumn),
                 (QStringList{ u"1200"_s, u"3"_s, u"50"_s }));
        QCOMPARE(nodes->index(0, NodesModel::ConnectionsColumn).data().typeId(),
                 QMetaType::LongLong); // a number: the view formats it in its locale
        QCOMPARE(column(nodes, NodesModel::ChannelsColumn),
                 (QStringList{ u"3400"_s, u"3"_s, u"70"_s }));
        QCOMPARE(column(nodes, NodesModel::MessagesInColumn),
                 (QStringList{ u"120.5"_s, u"0.0"_s, u"4.0"_s }));
        QCOMPARE(column(nodes, NodesModel::MessagesOutColumn),
                 (QStringList{ u"9800.0"_s, u"12.0"_s, u"40.0"_s }));
        QCOMPARE(column(nodes, NodesModel::AvailableColumn),
                 (QStringList{ u"Yes"_s, u"Yes"_s, u"No"_s }));
        QVERIFY(!nodes->index(2, 0).data(NodesModel::AvailableRole).toBool());
        QCOMPARE(nodes->index(2, NodesModel::MessagesOutColumn).data(NodesModel::SortRole),
                 QVariant(40.0));
        QCOMPARE(nodes->index(1, 0).data(NodesModel::KeyRole).toString(), QStringLiteral("node-b"));
        QCOMPARE(nodes->headerData(NodesModel::IdColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Node"));
        QCOMPARE(nodes->headerData(NodesModel::MessagesOutColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Messages out/s"));
        QCOMPARE(nodes->rowOf(QStringLiteral("node-c")), 2);
        QCOMPARE(nodes->rowOf(QStringLiteral("node-x")), -1);

        // The load series holds the history (its last sample is the current load).
        QCOMPARE(nodes->loadSeries(QStringLiteral("node-a")).samples(),
                 (QList<MetricSample>{ { 1796057940000, 0.40 }, { 1796058000000, 0.42 } }));
        QVERIFY(nodes->loadSeries(QStringLiteral("node-b")).isEmpty()); // not enough data
        QCOMPARE(nodes->messagesOutSeries(QStringLiteral("node-a")).samples(),
                 (QList<MetricSample>{ { 1796058000000, 9800.0 } }));
        QCOMPARE(nodes->messagesInSeries(QStringLiteral("node-c")).samples(),
                 (QList<MetricSample>{ { 1796058000000, 4.0 } }));
        QCOMPARE(models.takenAtMs(), 1796058000000);
        QCOMPARE(models.answeredBy(), QStringLiteral("node-a"));
        QCOMPARE(models.clientAddresses().value(QStringLiteral("node-c")),
                 QStringLiteral("10.0.1.1:4000"));
    }

    void placementShowsOwnersAndClientNodes()
    {
        SnapshotModels models;
        models.apply(first());
        const PlacementModel *placement = models.placement();
        QCOMPARE(placement->rowCount(), 2);
        QCOMPARE(column(placement, PlacementModel::TenantColumn),
                 (QStringList{ u"acme"_s, u"globex"_s }));
        QCOMPARE(column(placement, PlacementModel::StreamOwnerColumn),
                 (QStringList{ u"node-a (ready)"_s, u"—"_s }));
        QCOMPARE(column(placement, PlacementModel::NodesColumn),
                 (QStringList{ u"node-a, node-b"_s, u"node-c"_s }));
        QCOMPARE(column(placement, PlacementModel::UsersColumn),
                 (QStringList{ u"1193"_s, u"50"_s }));
        const QModelIndex acme = placement->index(0, 0);
        QCOMPARE(acme.data(PlacementModel::StreamOwnerRole).toString(), QStringLiteral("node-a"));
        QCOMPARE(acme.data(PlacementModel::StreamStateRole).toString(), QStringLiteral("ready"));
        QCOMPARE(acme.data(PlacementModel::UsersByNodeRole).toMap(),
                 (QVariantMap{ { u"node-a"_s, qint64(1190) }, { u"node-b"_s, qint64(3) } }));
        QCOMPARE(acme.data(PlacementModel::NodesRole).toStringList(),
                 (QStringList{ u"node-a"_s, u"node-b"_s }));
        QCOMPARE(acme.data(PlacementModel::RegionsRole).toStringList(),
                 QStringList{ u"us-east-1"_s });
        QCOMPARE(placement->index(1, 0).data(PlacementModel::RegionsRole).toStringList(),
                 QStringList{ u"eu-west-1"_s });
        QCOMPARE(cell(placement, 0, PlacementModel::NodesColumn, Qt::ToolTipRole),
                 QStringLiteral("node-a: 1190 user(s)\nnode-b: 3 user(s)"));
        QVERIFY(placement->index(1, 0).data(PlacementModel::StreamOwnerRole).toString().isEmpty());
        QCOMPARE(placement->regions(), (QStringList{ u"eu-west-1"_s, u"us-east-1"_s }));
        QCOMPARE(placement->tenantsOwnedBy(QStringLiteral("node-a")), QStringList{ u"acme"_s });
        QCOMPARE(placement->tenantsWithClientsOn(QStringLiteral("node-b")),
                 QStringList{ u"acme"_s });
        QCOMPARE(placement->headerData(PlacementModel::StreamOwnerColumn, Qt::Horizontal),
                 QVariant(QStringLiteral("Stream owner")));
    }

    void placementFiltersByTenantAndRegion()
    {
        SnapshotModels models;
        models.apply(first());
        PlacementFilterProxy proxy;
        proxy.setSourceModel(models.placement());
        QAbstractItemModelTester tester(&proxy,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(column(&proxy, 0), (QStringList{ u"acme"_s, u"globex"_s }));
        proxy.setTenantFilter(QStringLiteral("GLO")); // case-insensitive substring
        QCOMPARE(column(&proxy, 0), QStringList{ u"globex"_s });
        proxy.setTenantFilter(QString());
        proxy.setRegionFilter(QStringLiteral("eu-west-1"));
        QCOMPARE(column(&proxy, 0), QStringList{ u"globex"_s });
        proxy.setRegionFilter(QStringLiteral("us-east-1"));
        QCOMPARE(column(&proxy, 0), QStringList{ u"acme"_s });
        proxy.setTenantFilter(QStringLiteral("glo"));
        QCOMPARE(proxy.rowCount(), 0); // both filters apply

        // The filter follows the data: globex moves to us-east-1, initech arrives in eu-west-1.
        proxy.setTenantFilter(QString());
        proxy.setRegionFilter(QStringLiteral("eu-west-1"));
        models.apply(later());
        QCOMPARE(column(&proxy, 0), QStringList{ u"initech"_s });
        proxy.setRegionFilter(QStringLiteral("us-east-1"));
        QCOMPARE(column(&proxy, 0), (QStringList{ u"acme"_s, u"globex"_s }));
        // A stream owner alone puts a tenant in its region.
        proxy.setRegionFilter(QStringLiteral("eu-west-1"));
        ClusterSnapshot ownerOnly = later();
        ownerOnly.tenants[1].streamOwner = QStringLiteral("node-c"); // globex's clients stay on a
        models.apply(ownerOnly);
        QCOMPARE(column(&proxy, 0), (QStringList{ u"globex"_s, u"initech"_s }));
        // Sorting by users uses the numbers, not their text.
        proxy.setRegionFilter(QString());
        proxy.sort(PlacementModel::UsersColumn, Qt::AscendingOrder);
        QCOMPARE(column(&proxy, 0), (QStringList{ u"initech"_s, u"globex"_s, u"acme"_s }));
    }

    void flowsAndConfigShowTheRecordedSnapshot()
    {
        SnapshotModels models;
        models.apply(first());
        const LinkFlowModel *links = models.links();
        QCOMPARE(links->rowCount(), 2);
        QCOMPARE(column(links, LinkFlowModel::FromColumn),
                 (QStringList{ u"node-a"_s, u"node-c"_s }));
        QCOMPARE(column(links, LinkFlowModel::ToColumn), (QStringList{ u"node-b"_s, u"node-a"_s }));
        QCOMPARE(column(links, LinkFlowModel::MessagesColumn),
                 (QStringList{ u"118.0"_s, u"0.5"_s }));
        QCOMPARE(column(links, LinkFlowModel::BytesColumn),
                 (QStringList{ u"23600.0"_s, u"100.0"_s }));
        QCOMPARE(links->index(0, 0).data(LinkFlowModel::KeyRole).toString(),
                 QStringLiteral("node-a → node-b"));
        QCOMPARE(links->index(1, 0).data(LinkFlowModel::MessagesPerSecondRole).toDouble(), 0.5);
        QCOMPARE(links->rowOf(QStringLiteral("node-c"), QStringLiteral("node-a")), 1);
        QCOMPARE(links->rowOf(QStringLiteral("node-a"), QStringLiteral("node-c")), -1);
        QCOMPARE(links->maxMessagesPerSecond(), 118.0);

        const TenantFlowModel *flows = models.tenantFlows();
        QCOMPARE(flows->rowCount(), 1);
        QCOMPARE(column(flows, TenantFlowModel::TenantColumn), QStringList{ u"acme"_s });
        QCOMPARE(column(flows, TenantFlowModel::NodeColumn), QStringList{ u"node-a"_s });
        QCOMPARE(column(flows, TenantFlowModel::MessagesInColumn), QStringList{ u"120.0"_s });
        QCOMPARE(column(flows, TenantFlowModel::MessagesOutColumn), QStringList{ u"9790.0"_s });
        QCOMPARE(flows->tenantRate(QStringLiteral("acme")), 9910.0);
        QCOMPARE(flows->tenantRateSeries(QStringLiteral("acme")).samples(),
                 (QList<MetricSample>{ { 1796058000000, 9910.0 } }));
        QCOMPARE(flows->totalRateSeries().samples(),
                 (QList<MetricSample>{ { 1796058000000, 9910.0 } }));

        const ConfigModel *config = models.config();
        QCOMPARE(config->revision(), 57);
        QCOMPARE(config->rowCount(), 2);
        QCOMPARE(column(config, ConfigModel::KeyColumn),
                 (QStringList{ u"region_mapping"_s, u"tenant_limits.acme"_s }));
        QCOMPARE(cell(config, 1, ConfigModel::ValueColumn),
                 QStringLiteral(R"({"max_concurrent_users":5000})"));
        QCOMPARE(column(config, ConfigModel::RevisionColumn), (QStringList{ u"12"_s, u"57"_s }));
        QCOMPARE(column(config, ConfigModel::TemporaryColumn), (QStringList{ u"No"_s, u"Yes"_s }));
        QCOMPARE(config->index(1, 0).data(ConfigModel::ValueRole).toByteArray(),
                 QByteArray(R"({"max_concurrent_users":5000})"));
        QCOMPARE(config->entry(QStringLiteral("region_mapping"))->modRevision, 12);
    }

    // --- the step from one snapshot to the next ---------------------------------------------

    void temporaryConfigShowsWhenItEnds()
    {
        ClusterSnapshot snapshot = first();
        snapshot.config = { { u"flags/base"_s, "1", 3, false, std::nullopt },
                            { u"flags/boost"_s, "2", 4, true, Q_INT64_C(1796058600000) },
                            { u"flags/new"_s, "3", 5, true, std::nullopt } };
        SnapshotModels models;
        models.apply(snapshot);
        const ConfigModel *config = models.config();
        const QDateTime end = QDateTime::fromMSecsSinceEpoch(Q_INT64_C(1796058600000));
        QCOMPARE(column(config, ConfigModel::TemporaryColumn),
                 (QStringList{ u"No"_s, u"Until "_s + QLocale().toString(end, QLocale::ShortFormat),
                               u"Yes"_s }));
        QCOMPARE(config->index(1, 0).data(ConfigModel::ExpiresAtRole).toDateTime(), end);
        QVERIFY(!config->index(0, 0).data(ConfigModel::ExpiresAtRole).isValid());
        QVERIFY(!config->index(2, 0).data(ConfigModel::ExpiresAtRole).isValid());
        QVERIFY(cell(config, 1, ConfigModel::TemporaryColumn, Qt::ToolTipRole)
                        .contains(QLocale().toString(end, QLocale::LongFormat)));

        // The answering node learns the new entry's end: that row's temporary cell changes.
        QSignalSpy changed(config, &QAbstractItemModel::dataChanged);
        snapshot.config[2].expiresAtMs = Q_INT64_C(1796058900000);
        models.apply(snapshot);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.at(0).at(0).toModelIndex().row(), 2);
        QCOMPARE(changed.at(0).at(0).toModelIndex().column(), int(ConfigModel::TemporaryColumn));
        QVERIFY(cell(config, 2, ConfigModel::TemporaryColumn).startsWith(u"Until "_s));
    }

    void aLaterSnapshotChangesOnlyWhatChanged()
    {
        SnapshotModels models;
        models.apply(first());
        ModelSpies nodes(models.nodes());
        ModelSpies placement(models.placement());
        ModelSpies links(models.links());
        ModelSpies flows(models.tenantFlows());
        ModelSpies config(models.config());
        QSignalSpy series(models.nodes(), &NodesModel::seriesChanged);
        QSignalSpy rates(models.tenantFlows(), &TenantFlowModel::ratesChanged);
        QSignalSpy revision(models.config(), &ConfigModel::revisionChanged);
        QSignalSpy applied(&models, &SnapshotModels::snapshotApplied);

        const SnapshotChanges changes = models.apply(later());

        for (const ModelSpies *spies : { &nodes, &placement, &links, &flows, &config }) {
            QCOMPARE(spies->reset.count(), 0);
            QCOMPARE(spies->layout.count(), 0);
            QCOMPARE(spies->moved.count(), 0);
        }
        // Nodes: node-b left; node-a and node-c (now adjacent) changed from uptime to available.
        QCOMPARE(nodes.removedRows(), QStringList{ u"1-1"_s });
        QCOMPARE(nodes.insertedRows(), QStringList());
        QCOMPARE(nodes.changedRanges(),
                 QStringList{ QStringLiteral("0-1:%1-%2")
                                      .arg(int(NodesModel::UptimeColumn))
                                      .arg(int(NodesModel::AvailableColumn)) });
        QCOMPARE(changes.nodes.removed, 1);
        QCOMPARE(changes.nodes.changed, 2);
        QCOMPARE(column(models.nodes(), NodesModel::IdColumn),
                 (QStringList{ u"node-a"_s, u"node-c"_s }));
        QCOMPARE(column(models.nodes(), NodesModel::LoadColumn),
                 (QStringList{ u"0.55"_s, u"2.10"_s }));
        QCOMPARE(column(models.nodes(), NodesModel::UptimeColumn),
                 (QStringList{ u"2 h 14 min"_s, u"16 h 7 min"_s }));
        QCOMPARE(column(models.nodes(), NodesModel::AvailableColumn),
                 (QStringList{ u"Yes"_s, u"Yes"_s }));
        QCOMPARE(cell(models.nodes(), 0, NodesModel::ConnectionsColumn), QStringLiteral("1243"));
        QCOMPARE(series.count(), 2);
        QCOMPARE(series.at(0).at(0).toString(), QStringLiteral("node-a"));
        QCOMPARE(series.at(1).at(0).toString(), QStringLiteral("node-c"));
        QCOMPARE(models.nodes()->loadSeries(QStringLiteral("node-a")).samples(),
                 (QList<MetricSample>{ { 1796057940000, 0.40 },
                                       { 1796058000000, 0.42 },
                                       { 1796058060000, 0.55 } }));
        QCOMPARE(models.nodes()->loadSeries(QStringLiteral("node-a")).maximum(),
                 std::optional<double>(0.55));
        QCOMPARE(models.nodes()->loadSeries(QStringLiteral("node-c")).minimum(),
                 std::optional<double>(2.1));
        QCOMPARE(models.nodes()->messagesInSeries(QStringLiteral("node-a")).samples(),
                 (QList<MetricSample>{ { 1796058000000, 120.5 }, { 1796058060000, 130.0 } }));
        QVERIFY(models.nodes()->loadSeries(QStringLiteral("node-b")).isEmpty()); // gone

        // Placement: initech arrived at the end; acme (its node-b users moved) and globex (moved
        // to node-a) changed, from the owner to the users column.
        QCOMPARE(placement.insertedRows(), QStringList{ u"2-2"_s });
        QCOMPARE(placement.removedRows(), QStringList());
        QCOMPARE(placement.changedRanges(), QStringList{ u"0-1:1-3"_s });
        QCOMPARE(column(models.placement(), PlacementModel::StreamOwnerColumn),
                 (QStringList{ u"node-a (ready)"_s, u"node-a (starting)"_s, u"node-c (ready)"_s }));
        QCOMPARE(column(models.placement(), PlacementModel::NodesColumn),
                 (QStringList{ u"node-a"_s, u"node-a"_s, u"node-c"_s }));

        // Links: a -> b went, a -> c came (both row 0), c -> a changed both rates.
        QCOMPARE(links.removedRows(), QStringList{ u"0-0"_s });
        QCOMPARE(links.insertedRows(), QStringList{ u"0-0"_s });
        QCOMPARE(links.changedRanges(), QStringList{ u"1-1:2-3"_s });
        QCOMPARE(column(models.links(), LinkFlowModel::ToColumn),
                 (QStringList{ u"node-c"_s, u"node-a"_s }));
        QCOMPARE(column(models.links(), LinkFlowModel::MessagesColumn),
                 (QStringList{ u"15.0"_s, u"2.0"_s }));

        // Tenant flows: globex arrived after acme, whose rates changed.
        QCOMPARE(flows.insertedRows(), QStringList{ u"1-1"_s });
        QCOMPARE(flows.removedRows(), QStringList());
        QCOMPARE(flows.changedRanges(), QStringList{ u"0-0:2-3"_s });
        QCOMPARE(rates.count(), 1);
        QCOMPARE(models.tenantFlows()->tenantRateSeries(QStringLiteral("acme")).samples(),
                 (QList<MetricSample>{ { 1796058000000, 9910.0 }, { 1796058060000, 9975.0 } }));
        QCOMPARE(models.tenantFlows()->tenantRateSeries(QStringLiteral("globex")).samples(),
                 (QList<MetricSample>{ { 1796058060000, 55.0 } }));
        QCOMPARE(models.tenantFlows()->totalRateSeries().last()->value, 10030.0);
        QCOMPARE(models.tenantFlows()->busiestTenants(1), QStringList{ u"acme"_s });
        QCOMPARE(models.tenantFlows()->busiestTenants(5), (QStringList{ u"acme"_s, u"globex"_s }));

        // Config: the temporary acme limit expired, a globex limit came; the revision moved.
        QCOMPARE(config.removedRows(), QStringList{ u"1-1"_s });
        QCOMPARE(config.insertedRows(), QStringList{ u"1-1"_s });
        QCOMPARE(config.changedRanges(), QStringList());
        QCOMPARE(revision.count(), 1);
        QCOMPARE(revision.at(0).at(0).toLongLong(), 60);
        QCOMPARE(column(models.config(), ConfigModel::KeyColumn),
                 (QStringList{ u"region_mapping"_s, u"tenant_limits.globex"_s }));

        QCOMPARE(applied.count(), 1);
        QCOMPARE(applied.at(0).at(0).toLongLong(), 1796058060000);
    }

    void theSameSnapshotAgainChangesNothing()
    {
        SnapshotModels models;
        models.apply(later());
        ModelSpies nodes(models.nodes());
        ModelSpies placement(models.placement());
        ModelSpies links(models.links());
        ModelSpies flows(models.tenantFlows());
        ModelSpies config(models.config());
        QSignalSpy series(models.nodes(), &NodesModel::seriesChanged);
        QSignalSpy revision(models.config(), &ConfigModel::revisionChanged);
        const SnapshotChanges changes = models.apply(later());
        for (const ModelSpies *spies : { &nodes, &placement, &links, &flows, &config }) {
            QCOMPARE(spies->inserted.count(), 0);
            QCOMPARE(spies->removed.count(), 0);
            QCOMPARE(spies->changed.count(), 0);
            QCOMPARE(spies->reset.count(), 0);
        }
        QCOMPARE(series.count(), 0);
        QCOMPARE(revision.count(), 0);
        QVERIFY(changes.nodes.isEmpty() && changes.placement.isEmpty() && changes.links.isEmpty()
                && changes.tenantFlows.isEmpty() && changes.config.isEmpty());
        QCOMPARE(models.tenantFlows()->totalRateSeries().size(), 1); // no second sample
    }

    void aSortingProxyStaysSorted()
    {
        // Rows whose values cross each other's in separate runs, with arrivals and departures
        // between them: a dynamically sorted proxy must stay in order (it places each changed
        // run among rows whose values it has already been told about).
        QRandomGenerator random(6);
        QMap<QString, qint64> users;
        for (int t = 0; t < 300; ++t) {
            users.insert(QStringLiteral("t%1").arg(t, 3, 10, QLatin1Char('0')),
                         random.bounded(1000));
        }
        const auto snapshotOf = [](const QMap<QString, qint64> &usersByTenant) {
            ClusterSnapshot snapshot = first();
            snapshot.tenants.clear();
            for (auto it = usersByTenant.cbegin(); it != usersByTenant.cend(); ++it) {
                snapshot.tenants.append({ it.key(), QString(), QString(),
                                          QHash<QString, qint64>{ { u"node-a"_s, it.value() } } });
            }
            return snapshot;
        };
        SnapshotModels models;
        PlacementFilterProxy proxy;
        proxy.setSourceModel(models.placement());
        proxy.sort(PlacementModel::UsersColumn, Qt::DescendingOrder);
        for (int step = 0; step < 10; ++step) {
            for (int k = 0; k < 30; ++k) {
                const QString tenantName = users.keys().at(random.bounded(users.size()));
                users[tenantName] = random.bounded(1000);
            }
            for (int k = 0; k < 3; ++k) {
                users.remove(users.keys().at(random.bounded(users.size())));
                users.insert(QStringLiteral("t%1-%2").arg(random.bounded(300)).arg(step),
                             random.bounded(1000));
            }
            models.apply(snapshotOf(users));
            QCOMPARE(proxy.rowCount(), users.size());
            for (int row = 1; row < proxy.rowCount(); ++row) {
                const qint64 above =
                        proxy.index(row - 1, 0).data(PlacementModel::TotalUsersRole).toLongLong();
                const qint64 below =
                        proxy.index(row, 0).data(PlacementModel::TotalUsersRole).toLongLong();
                QVERIFY2(above >= below,
                         qPrintable(QStringLiteral("step %1, row %2: %3 < %4")
                                            .arg(step)
                                            .arg(row)
                                            .arg(above)
                                            .arg(below)));
            }
        }
    }

    void keyedProxiesSortAsTheirSortRoleCompares()
    {
        // KeyedSortProxy compares rows natively (rowLessThan) instead of through SortRole
        // QVariants: the order must be exactly a plain proxy's, ties (stable) included, for
        // every column of the large models, in both directions, also through another proxy.
        QRandomGenerator random(11);
        ClusterSnapshot snapshot = first();
        snapshot.tenants.clear();
        snapshot.tenantFlows.clear();
        snapshot.links.clear();
        const QStringList nodes{ u"node-a"_s, u"node-b"_s, u"node-c"_s, u"node-d"_s };
        for (int t = 0; t < 60; ++t) {
            const QString tenantName = QStringLiteral("T%1").arg(random.bounded(1000));
            snapshot.tenants.append(
                    { tenantName, nodes.at(random.bounded(nodes.size())), u"ready"_s,
                      QHash<QString, qint64>{ { nodes.at(random.bounded(nodes.size())),
                                                qint64(random.bounded(4)) } } });
            for (const QString &node : nodes) {
                if (random.bounded(2) == 0) {
                    snapshot.tenantFlows.append({ tenantName, node, double(random.bounded(5)),
                                                  double(random.bounded(5)) / 2 });
                }
            }
        }
        for (const QString &from : nodes) {
            for (const QString &to : nodes) {
                if (from != to) {
                    snapshot.links.append(
                            { from, to, double(random.bounded(3)), double(random.bounded(3)) });
                }
            }
        }
        SnapshotModels models;
        models.apply(snapshot);
        QVERIFY(models.placement()->rowCount() > 40);
        QVERIFY(models.tenantFlows()->rowCount() > 60);
        QCOMPARE(models.links()->rowCount(), 12);

        const auto keysInOrder = [](const QAbstractItemModel *proxy) {
            QStringList keys;
            for (int row = 0; row < proxy->rowCount(); ++row) {
                keys.append(proxy->index(row, 0).data(KeyedTableModel::KeyRole).toString());
            }
            return keys;
        };
        const auto compare = [&](KeyedTableModel *model, QAbstractItemModel *between) {
            QAbstractItemModel *source = between ? between : model;
            for (int column = 0; column < model->columnCount(); ++column) {
                for (const Qt::SortOrder order : { Qt::AscendingOrder, Qt::DescendingOrder }) {
                    KeyedSortProxy keyed;
                    keyed.setSourceModel(source);
                    keyed.sort(column, order);
                    QSortFilterProxyModel plain;
                    plain.setSortRole(KeyedTableModel::SortRole);
                    plain.setSourceModel(source);
                    plain.sort(column, order);
                    QCOMPARE(keysInOrder(&keyed), keysInOrder(&plain));
                }
            }
        };
        compare(models.placement(), nullptr);
        compare(models.tenantFlows(), nullptr);
        compare(models.links(), nullptr);
        PlacementFilterProxy filter;
        filter.setSourceModel(models.placement());
        filter.setRegionFilter(u"us-east-1"_s);
        QVERIFY(filter.rowCount() > 0 && filter.rowCount() < models.placement()->rowCount());
        compare(models.placement(), &filter);
    }

    void lookupsByKeyWorkInsideRowSignals()
    {
        // A page's slot on rowsInserted/rowsRemoved may look rows up by key while the update is
        // still under way: it must find exactly the rows the model shows at that moment.
        SnapshotModels models;
        const PlacementModel *placement = models.placement();
        int checks = 0;
        const auto check = [&] {
            for (int row = 0; row < placement->rowCount(); ++row) {
                QCOMPARE(placement->rowOf(placement->tenant(row)), row);
                ++checks;
            }
        };
        connect(placement, &QAbstractItemModel::rowsInserted, this, check);
        connect(placement, &QAbstractItemModel::rowsRemoved, this, check);
        ClusterSnapshot withoutAcme = later();
        withoutAcme.tenants.removeFirst();
        for (const ClusterSnapshot &snapshot : { first(), later(), withoutAcme, first() }) {
            models.apply(snapshot);
        }
        // Rows each signal's check saw: acme+globex in; initech in; acme out; then, in key
        // order, acme in (beside globex and initech) and initech out.
        QCOMPARE(checks, 2 + 3 + 2 + 3 + 2);
        QCOMPARE(column(placement, 0), (QStringList{ u"acme"_s, u"globex"_s }));
    }

    void everyModelPassesTheModelTester()
    {
        SnapshotModels models;
        PlacementFilterProxy proxy;
        proxy.setSourceModel(models.placement());
        proxy.setRegionFilter(QStringLiteral("us-east-1"));
        proxy.sort(PlacementModel::UsersColumn, Qt::DescendingOrder);
        std::vector<std::unique_ptr<QAbstractItemModelTester>> testers;
        for (QAbstractItemModel *model : std::initializer_list<QAbstractItemModel *>{
                     models.nodes(), models.placement(), models.links(), models.tenantFlows(),
                     models.config(), models.tenants(), &proxy }) {
            testers.push_back(std::make_unique<QAbstractItemModelTester>(
                    model, QAbstractItemModelTester::FailureReportingMode::QtTest));
        }
        ClusterSnapshot empty;
        empty.takenAtMs = 1796058120000;
        // Forwards, backwards (rows come back), to nothing and back again.
        for (const ClusterSnapshot &snapshot : { first(), later(), first(), empty, later() }) {
            models.apply(snapshot);
            if (QTest::currentTestFailed()) {
                return;
            }
        }
        QCOMPARE(models.nodes()->rowCount(), 2);
        QCOMPARE(models.placement()->rowCount(), 3);
        QCOMPARE(proxy.rowCount(), 2);
        QCOMPARE(column(&proxy, 0), (QStringList{ u"acme"_s, u"globex"_s }));
    }

    void rowsFollowTheirKeysWhateverTheInputOrder()
    {
        // The server sends sorted lists, but the models do not rely on it; a repeated key keeps
        // its first row.
        ClusterSnapshot snapshot = later();
        std::reverse(snapshot.links.begin(), snapshot.links.end());
        std::reverse(snapshot.nodes.begin(), snapshot.nodes.end());
        snapshot.links.append(
                rt::api::LinkFlow{ QStringLiteral("node-a"), QStringLiteral("node-c"), 99, 99 });
        SnapshotModels models;
        models.apply(snapshot);
        QCOMPARE(column(models.links(), LinkFlowModel::FromColumn),
                 (QStringList{ u"node-a"_s, u"node-c"_s }));
        QCOMPARE(column(models.links(), LinkFlowModel::MessagesColumn),
                 (QStringList{ u"15.0"_s, u"2.0"_s })); // the first a -> c, not the repeated one
        QCOMPARE(column(models.nodes(), NodesModel::IdColumn),
                 (QStringList{ u"node-a"_s, u"node-c"_s }));
    }

    void aQuietTenantFadesOutOfTheRateSeries()
    {
        SnapshotModels models(nullptr, 10'000); // a 10 s window
        ClusterSnapshot snapshot = later();
        models.apply(snapshot);
        QCOMPARE(models.tenantFlows()->tenantsWithSeries(),
                 (QStringList{ u"acme"_s, u"globex"_s }));
        snapshot.tenantFlows.removeLast(); // globex goes quiet
        for (int second = 1; second <= 10; ++second) {
            snapshot.takenAtMs += 1000;
            models.apply(snapshot);
        }
        // Zeros while its last traffic is within the window...
        const MetricSeries globex =
                models.tenantFlows()->tenantRateSeries(QStringLiteral("globex"));
        QCOMPARE(globex.size(), 11);
        QCOMPARE(globex.first()->value, 55.0);
        QCOMPARE(globex.last()->value, 0.0);
        QCOMPARE(models.tenantFlows()->tenantRate(QStringLiteral("globex")), 0.0);
        // ...then no series at all.
        snapshot.takenAtMs += 1000;
        models.apply(snapshot);
        QCOMPARE(models.tenantFlows()->tenantsWithSeries(), QStringList{ u"acme"_s });
        QCOMPARE(models.tenantFlows()->totalRateSeries().size(), 11); // 10 s window of 1 s steps
    }

    // --- the tenant API's list --------------------------------------------------------------

    void tenantsShowTheApiList()
    {
        const auto list = rt::api::TenantSummary::listFromJson(QByteArray(
                R"({"data":[{"external_id":"globex","name":null,"max_concurrent_users":200,
                    "private_only":false,"presence_enabled":true,"inserted_at":"2026-11-29T23:59:59"},
                   {"external_id":"acme","name":"Acme Corp","max_concurrent_users":5000,
                    "max_events_per_second":100,"private_only":true,
                    "extensions":[{"type":"postgres_cdc_rls","settings":{}}]}]})"));
        QVERIFY(list.ok());
        TenantsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        ModelSpies spies(&model);
        model.setTenants(*list);
        QCOMPARE(spies.insertedRows(), QStringList{ u"0-1"_s });
        QCOMPARE(column(&model, TenantsModel::ExternalIdColumn),
                 (QStringList{ u"acme"_s, u"globex"_s }));
        QCOMPARE(column(&model, TenantsModel::NameColumn), (QStringList{ u"Acme Corp"_s, u""_s }));
        QCOMPARE(column(&model, TenantsModel::MaxUsersColumn),
                 (QStringList{ u"5000"_s, u"200"_s }));
        QCOMPARE(column(&model, TenantsModel::PrivateOnlyColumn),
                 (QStringList{ u"Yes"_s, u"No"_s }));
        QCOMPARE(column(&model, TenantsModel::PresenceEnabledColumn),
                 (QStringList{ u"No"_s, u"Yes"_s }));
        QCOMPARE(column(&model, TenantsModel::ExtensionsColumn),
                 (QStringList{ u"postgres_cdc_rls"_s, u""_s }));
        QCOMPARE(model.index(1, TenantsModel::InsertedAtColumn).data(TenantsModel::SortRole),
                 QVariant(QDateTime(QDate(2026, 11, 29), QTime(23, 59, 59), Qt::UTC)));
        QCOMPARE(model.headerData(TenantsModel::MaxUsersColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Max users"));

        // An edit's answer changes its row in place; a create inserts in order; a delete removes.
        rt::api::TenantSummary edited = model.tenant(1);
        edited.maxConcurrentUsers = 300;
        model.upsertTenant(edited);
        QCOMPARE(spies.changedRanges(),
                 QStringList{ QStringLiteral("1-1:%1-%1").arg(int(TenantsModel::MaxUsersColumn)) });
        QCOMPARE(cell(&model, 1, TenantsModel::MaxUsersColumn), QStringLiteral("300"));
        rt::api::TenantSummary created;
        created.externalId = QStringLiteral("bluth");
        model.upsertTenant(created);
        QCOMPARE(spies.insertedRows(), (QStringList{ u"0-1"_s, u"1-1"_s }));
        QCOMPARE(column(&model, 0), (QStringList{ u"acme"_s, u"bluth"_s, u"globex"_s }));
        model.removeTenant(QStringLiteral("acme"));
        QCOMPARE(spies.removedRows(), QStringList{ u"0-0"_s });
        QCOMPARE(column(&model, 0), (QStringList{ u"bluth"_s, u"globex"_s }));
        QCOMPARE(spies.reset.count(), 0);
    }
};

QTEST_GUILESS_MAIN(DashboardModelsTest)
#include "tst_dashboard_models.moc"
