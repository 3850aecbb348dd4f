// Every view of the dashboard, offscreen, over models fed with recorded admin snapshots: the
// Nodes table and its CPU-load chart, Placement with its filters and highlighted owners, the
// Message flow graph (edge width follows the rate), tables and rate chart, Configuration with
// compare-and-swap edits, conflicts and temporary overrides, and Tenants with create, edit and
// suspend. The views only state intents: the tests check the signals they emit.
#include "dashboard/charts/time_series_chart.h"
#include "dashboard/models/config_model.h"
#include "dashboard/models/placement_model.h"
#include "dashboard/models/snapshot_models.h"
#include "dashboard/models/tenants_model.h"
#include "dashboard/views/busiest_flows_filter.h"
#include "dashboard/views/config_page.h"
#include "dashboard/views/flow_page.h"
#include "dashboard/views/main_window.h"
#include "dashboard/views/nodes_page.h"
#include "dashboard/views/placement_page.h"
#include "dashboard/views/tenants_page.h"
#include "dashboard/widgets/flow_graph.h"
#include "shared/api/cluster_snapshot.h"
#include "shared/api/tenant_summary.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFrame>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

using namespace rt::dashboard;

namespace {

rt::api::ClusterSnapshot recorded(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        qFatal("cannot read %s", qPrintable(path));
    }
    auto snapshot = rt::api::ClusterSnapshot::fromJson(file.readAll());
    if (!snapshot.ok()) {
        qFatal("bad snapshot %s", qPrintable(path));
    }
    return *snapshot;
}

rt::api::ClusterSnapshot first()
{
    return recorded(QStringLiteral(RT_API_TEST_DATA "/snapshot-3-nodes.json"));
}

rt::api::ClusterSnapshot later()
{
    return recorded(QStringLiteral(RT_DASHBOARD_TEST_DATA "/snapshot-2-nodes-later.json"));
}

rt::api::TenantSummary tenant(const QString &externalId, qint64 maxUsers)
{
    rt::api::TenantSummary summary;
    summary.id = QStringLiteral("00000000-0000-0000-0000-00000000000") + externalId.left(1);
    summary.externalId = externalId;
    summary.name = externalId.toUpper();
    summary.maxConcurrentUsers = maxUsers;
    summary.maxChannelsPerClient = 100;
    summary.maxEventsPerSecond = 100;
    summary.maxJoinsPerSecond = 100;
    return summary;
}

void selectRow(QTableView *table, int row)
{
    table->selectionModel()->select(table->model()->index(row, 0),
                                    QItemSelectionModel::ClearAndSelect
                                            | QItemSelectionModel::Rows);
}

} // namespace

class DashboardViewsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        m_models = std::make_unique<SnapshotModels>();
        m_models->apply(first());
        m_window = std::make_unique<MainWindow>(m_models.get());
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }
    void cleanup()
    {
        m_window.reset();
        m_models.reset();
    }

    void mainWindowHasOneTabPerView()
    {
        QTabWidget *tabs = m_window->tabs();
        QCOMPARE(tabs->count(), 5);
        QCOMPARE(tabs->widget(0), m_window->nodesPage());
        QCOMPARE(tabs->widget(4), m_window->tenantsPage());
        m_window->setConnectionState(QStringLiteral("Reconnecting to node-b"), false);
        QCOMPARE(m_window->connectionStateText(), QStringLiteral("Reconnecting to node-b"));
        QVERIFY(m_window->languageChoices().contains(QStringLiteral("de")));
        QVERIFY(m_window->languageChoices().contains(QString()));
        // Every view renders (what --screenshot writes).
        for (int i = 0; i < tabs->count(); ++i) {
            tabs->setCurrentIndex(i);
            const QImage image = m_window->grab().toImage();
            QVERIFY(!image.isNull());
            QVERIFY(image.width() > 400 && image.height() > 300);
        }
    }

    void connectDialogStatesTheIntent()
    {
        QSignalSpy requested(m_window.get(), &MainWindow::connectRequested);
        ConnectDialog *dialog = m_window->openConnectDialog(QStringLiteral("http://a:4000"), {});
        dialog->tokenEdit()->setText(QStringLiteral(" token-1 "));
        QVERIFY(dialog->caFileEdit()->text().isEmpty());
        dialog->caFileEdit()->setText(QStringLiteral(" /etc/rt/ca.pem "));
        dialog->failoverHostsEdit()->setText(QStringLiteral("*.rt.internal, 10.0.0.0/8"));
        dialog->accept();
        QCOMPARE(requested.size(), 1);
        QCOMPARE(requested[0][0].toString(), QStringLiteral("http://a:4000"));
        QCOMPARE(requested[0][1].toByteArray(), QByteArrayLiteral("token-1"));
        const auto trust = requested[0][2].value<rt::dashboard::NodeTrust>();
        QCOMPARE(trust.caFile, QStringLiteral("/etc/rt/ca.pem"));
        QCOMPARE(trust.failoverHosts,
                 (QStringList{ QStringLiteral("*.rt.internal"), QStringLiteral("10.0.0.0/8") }));

        // Opened with what was chosen before, the dialog shows it.
        ConnectDialog *again =
                m_window->openConnectDialog(QStringLiteral("http://a:4000"), {}, trust);
        QCOMPARE(again->caFileEdit()->text(), QStringLiteral("/etc/rt/ca.pem"));
        QCOMPARE(again->failoverHostsEdit()->text(), QStringLiteral("*.rt.internal, 10.0.0.0/8"));
        again->reject();
    }

    void nodesTableAndLoadChart()
    {
        NodesPage *page = m_window->nodesPage();
        QCOMPARE(page->table()->model()->rowCount(), 3);
        TimeSeriesChart *chart = page->loadChart();
        QTRY_COMPARE(page->pendingRedraws(), 0); // lines are redrawn together, a turn later
        QVERIFY(chart->isLegendShown()); // three lines: named in the legend
        QCOMPARE(chart->seriesNames(),
                 (QStringList{ QStringLiteral("node-a"), QStringLiteral("node-b"),
                               QStringLiteral("node-c") }));
        QVERIFY(chart->pointCount(QStringLiteral("node-a")) >= 2); // its recorded history
        QCOMPARE(chart->pointCount(QStringLiteral("node-b")), 0); // not enough data yet
        QVERIFY(chart->valueAxisMaximum() >= 2.5); // node-c's load fits
        QCOMPARE(chart->timeAxisEndMs(), first().takenAtMs);

        // node-b leaves: its row and its line go; the others' lines grow.
        m_models->apply(later());
        QCOMPARE(page->table()->model()->rowCount(), 2);
        QTRY_COMPARE(page->pendingRedraws(), 0);
        QCOMPARE(chart->seriesNames(),
                 (QStringList{ QStringLiteral("node-a"), QStringLiteral("node-c") }));
        QCOMPARE(chart->timeAxisEndMs(), later().takenAtMs);
    }

    void placementFiltersAndOwners()
    {
        PlacementPage *page = m_window->placementPage();
        QCOMPARE(page->visibleRows(), 2);
        page->tenantFilter()->setText(QStringLiteral("acm"));
        QCOMPARE(page->visibleRows(), 1);
        page->tenantFilter()->clear();
        // Regions and nodes of the snapshot are the filters' choices.
        QVERIFY(page->regionFilter()->findData(QStringLiteral("eu-west-1")) > 0);
        page->regionFilter()->setCurrentIndex(
                page->regionFilter()->findData(QStringLiteral("eu-west-1")));
        QCOMPARE(page->visibleRows(), 1); // globex: clients on node-c only
        page->regionFilter()->setCurrentIndex(0);
        page->nodeFilter()->setCurrentIndex(page->nodeFilter()->findData(QStringLiteral("node-b")));
        QCOMPARE(page->visibleRows(), 1); // acme has 3 users on node-b
        const QModelIndex owner =
                page->table()->model()->index(0, PlacementModel::StreamOwnerColumn);
        QCOMPARE(owner.data(PlacementModel::StreamOwnerRole).toString(), QStringLiteral("node-a"));
        page->nodeFilter()->setCurrentIndex(0);
        QCOMPARE(page->visibleRows(), 2);
    }

    void flowGraphFollowsTheRates()
    {
        FlowPage *page = m_window->flowPage();
        FlowGraph *graph = page->graph();
        QCOMPARE(graph->nodes().size(), 3);
        const auto busiest = graph->edgeWidth(QStringLiteral("node-a"), QStringLiteral("node-b"));
        const auto quiet = graph->edgeWidth(QStringLiteral("node-c"), QStringLiteral("node-a"));
        QVERIFY(busiest && quiet);
        QVERIFY(*busiest > *quiet * 5); // 118/s against 0.5/s
        QVERIFY(!graph->edgeWidth(QStringLiteral("node-b"), QStringLiteral("node-a")));
        QVERIFY(graph->nodeCentre(QStringLiteral("node-a"))
                != graph->nodeCentre(QStringLiteral("node-c")));
        QCOMPARE(page->linkTable()->model()->rowCount(), 2);
        QCOMPARE(page->tenantTable()->model()->rowCount(), 1);
        QCOMPARE(page->rateChart()->seriesNames(), QStringList{ QStringLiteral("acme") });

        // The next snapshot: node-b is gone, a->c carries the traffic now.
        m_models->apply(later());
        QCOMPARE(graph->nodes().size(), 2);
        QVERIFY(!graph->edgeWidth(QStringLiteral("node-a"), QStringLiteral("node-b")));
        QVERIFY(graph->edgeWidth(QStringLiteral("node-a"), QStringLiteral("node-c")));
    }

    void theTenantTableShowsTheBusiestFlowsOrASearch()
    {
        // 300 flows of 150 tenants on two nodes, rate = index: the busiest 200 are shown.
        const auto snapshotWith = [](int busiestLateComer) {
            rt::api::ClusterSnapshot snapshot;
            snapshot.takenAtMs = 1'800'000'000'000 + busiestLateComer;
            for (int i = 0; i < 300; ++i) {
                const QString tenant =
                        QStringLiteral("tenant-%1").arg(i / 2, 3, 10, QLatin1Char('0'));
                const QString node =
                        i % 2 == 0 ? QStringLiteral("node-a") : QStringLiteral("node-b");
                const double rate = i == busiestLateComer ? 10'000 : i;
                snapshot.tenantFlows.append({ tenant, node, rate / 2, rate / 2 });
            }
            return snapshot;
        };
        SnapshotModels models;
        models.apply(snapshotWith(-1));
        BusiestFlowsFilter busiest(models.tenantFlows(), 200);
        QCOMPARE(busiest.rowCount(), 200);
        QVERIFY(busiest.isTrimmed());
        const auto shown = [&busiest](const QString &tenant, const QString &node) {
            for (int row = 0; row < busiest.rowCount(); ++row) {
                const QModelIndex index = busiest.index(row, 0);
                if (index.data(TenantFlowModel::TenantRole) == tenant
                    && index.data(TenantFlowModel::NodeRole) == node) {
                    return true;
                }
            }
            return false;
        };
        QVERIFY(shown(QStringLiteral("tenant-149"), QStringLiteral("node-b"))); // rate 299
        QVERIFY(shown(QStringLiteral("tenant-050"), QStringLiteral("node-a"))); // rate 100
        QVERIFY(!shown(QStringLiteral("tenant-049"), QStringLiteral("node-b"))); // rate 99
        QVERIFY(!shown(QStringLiteral("tenant-000"), QStringLiteral("node-a")));

        // tenant-000 on node-a becomes the busiest: in after the refresh, rate 100 out.
        models.apply(snapshotWith(0));
        busiest.refreshBusiest();
        QCOMPARE(busiest.rowCount(), 200);
        QVERIFY(shown(QStringLiteral("tenant-000"), QStringLiteral("node-a")));
        QVERIFY(!shown(QStringLiteral("tenant-050"), QStringLiteral("node-a")));

        // A search shows every flow of the matching tenants, busy or not.
        busiest.setSearch(QStringLiteral(" TENANT-04 "));
        QCOMPARE(busiest.rowCount(), 20); // tenant-040..049 on two nodes
        QVERIFY(!busiest.isTrimmed());
        QVERIFY(shown(QStringLiteral("tenant-049"), QStringLiteral("node-b")));
        busiest.setSearch(QString());
        QCOMPARE(busiest.rowCount(), 200);

        // The page says so only when it leaves flows out (the recorded cluster has one flow).
        QVERIFY(m_window->flowPage()->tenantRowsNote()->isHidden());
    }

    void aHundredLinesAreDrawnWithoutALegend()
    {
        TimeSeriesChart chart(QStringLiteral("load"), QStringLiteral("load"));
        QList<std::pair<QString, MetricSeries>> lines;
        for (int i = 0; i < 100; ++i) {
            MetricSeries series(600'000);
            series.append(1'800'000'000'000, 0.5);
            series.append(1'800'000'005'000, 1.0 + i / 100.0);
            lines.append({ QStringLiteral("node-%1").arg(i, 3, 10, QLatin1Char('0')), series });
        }
        chart.setManySeries(lines.mid(0, 5));
        QVERIFY(chart.isLegendShown());
        chart.setManySeries(lines);
        QCOMPARE(chart.seriesNames().size(), 100);
        QCOMPARE(chart.pointCount(QStringLiteral("node-099")), 2);
        QVERIFY(!chart.isLegendShown());
        QCOMPARE(chart.timeAxisEndMs(), 1'800'000'005'000);
        QVERIFY(chart.valueAxisMaximum() >= 1.99);
        chart.retainOnly({ QStringLiteral("node-000"), QStringLiteral("node-001") });
        QVERIFY(chart.isLegendShown());
        QVERIFY(chart.valueAxisMaximum() < 1.99); // the largest line left
    }

    void aFullMeshDrawsOnlyTheBusiestLinks()
    {
        // 100 nodes, 9,900 links (one at 0/s): the busiest MaxDrawnEdges are drawn, busiest
        // widest; the rest are left out, and so is a link without traffic.
        QStringList nodes;
        for (int i = 0; i < 100; ++i) {
            nodes.append(QStringLiteral("node-%1").arg(i, 3, 10, QLatin1Char('0')));
        }
        QList<FlowGraph::Edge> edges;
        double rate = 0;
        for (const QString &from : std::as_const(nodes)) {
            for (const QString &to : std::as_const(nodes)) {
                if (from != to) {
                    edges.append({ from, to, rate });
                    rate += 1;
                }
            }
        }
        FlowGraph graph;
        graph.resize(800, 600);
        graph.setGraph(nodes, edges);
        QCOMPARE(graph.flowingEdgeCount(), 9899);
        QCOMPARE(graph.drawnEdgeCount(), FlowGraph::MaxDrawnEdges);
        const FlowGraph::Edge &busiest = edges.constLast();
        QCOMPARE(graph.edgeWidth(busiest.from, busiest.to), 10.0);
        const FlowGraph::Edge &lastDrawn = edges.at(edges.size() - FlowGraph::MaxDrawnEdges);
        QVERIFY(graph.edgeWidth(lastDrawn.from, lastDrawn.to).has_value());
        const FlowGraph::Edge &firstLeftOut = edges.at(edges.size() - FlowGraph::MaxDrawnEdges - 1);
        QVERIFY(!graph.edgeWidth(firstLeftOut.from, firstLeftOut.to));
        QVERIFY(!graph.edgeWidth(edges.constFirst().from, edges.constFirst().to)); // 0/s
        QVERIFY(!graph.grab().isNull());
    }

    void configEditIsACompareAndSwap()
    {
        ConfigPage *page = m_window->configPage();
        m_window->tabs()->setCurrentWidget(page);
        QSignalSpy writes(page, &ConfigPage::writeRequested);
        QCOMPARE(page->table()->model()->rowCount(), 2);
        selectRow(page->table(), 0); // region_mapping at revision 12
        QCOMPARE(page->selectedKey(), QStringLiteral("region_mapping"));
        ConfigEditDialog *dialog = page->openEditor(false, false);
        QVERIFY(dialog != nullptr);
        QVERIFY(dialog->keyEdit()->isReadOnly());
        QCOMPARE(dialog->valueEdit()->toPlainText(),
                 QStringLiteral("{\"ap-northeast-2\":\"ap-northeast-1\"}"));
        dialog->valueEdit()->setPlainText(QStringLiteral("{\"eu-west-2\": "));
        QVERIFY(!dialog->okButton()->isEnabled()); // not JSON: cannot be sent
        QVERIFY(dialog->problem().contains(QStringLiteral("not valid JSON")));
        dialog->valueEdit()->setPlainText(QStringLiteral("{\"eu-west-2\": \"eu-west-1\"}"));
        QVERIFY(dialog->okButton()->isEnabled());
        dialog->accept();
        QCOMPARE(writes.size(), 1);
        const auto edit = writes[0][0].value<ConfigEdit>();
        QCOMPARE(edit.key, QStringLiteral("region_mapping"));
        QCOMPARE(edit.valueJson, QByteArrayLiteral("{\"eu-west-2\": \"eu-west-1\"}"));
        QCOMPARE(edit.expectedRevision, 12);
        QVERIFY(!edit.ttl);

        // Someone else was faster: the conflict shows both values; reapplying goes on top of
        // the current revision.
        page->showConflict(edit, QByteArrayLiteral("{\"x\":\"y\"}"), 61);
        QVERIFY(page->conflictBanner()->isVisible());
        QVERIFY(page->conflictText()->text().contains(QStringLiteral("{\"x\":\"y\"}")));
        QVERIFY(page->conflictText()->text().contains(QStringLiteral("61")));
        page->reapplyButton()->click();
        QCOMPARE(writes.size(), 2);
        const auto again = writes[1][0].value<ConfigEdit>();
        QCOMPARE(again.expectedRevision, 61);
        QCOMPARE(again.valueJson, edit.valueJson);
        QVERIFY(!page->conflictBanner()->isVisible());
    }

    void temporaryOverrideCarriesItsExpiry()
    {
        ConfigPage *page = m_window->configPage();
        QSignalSpy writes(page, &ConfigPage::writeRequested);
        ConfigEditDialog *dialog = page->openEditor(true, true);
        QVERIFY(!dialog->keyEdit()->isReadOnly());
        QVERIFY(!dialog->okButton()->isEnabled()); // no key yet
        dialog->keyEdit()->setText(QStringLiteral("tenant_limits.globex"));
        dialog->valueEdit()->setPlainText(QStringLiteral("{\"max_concurrent_users\": 10}"));
        QVERIFY(dialog->temporaryBox()->isChecked());
        dialog->ttlBox()->setValue(90);
        dialog->accept();
        QCOMPARE(writes.size(), 1);
        const auto edit = writes[0][0].value<ConfigEdit>();
        QCOMPARE(edit.expectedRevision, 0); // a new key
        QVERIFY(edit.ttl);
        QCOMPARE(edit.ttl->count(), 90);
    }

    void tenantsCreateEditSuspend()
    {
        m_models->tenants()->setTenants(
                { tenant(QStringLiteral("acme"), 5000), tenant(QStringLiteral("globex"), 200) });
        TenantsPage *page = m_window->tenantsPage();
        QCOMPARE(page->table()->model()->rowCount(), 2);
        QSignalSpy creates(page, &TenantsPage::createRequested);
        QSignalSpy updates(page, &TenantsPage::updateRequested);
        QSignalSpy suspends(page, &TenantsPage::suspendRequested);

        TenantDialog *create = page->openEditor(true);
        QVERIFY(!create->okButton()->isEnabled());
        create->externalIdEdit()->setText(QStringLiteral("initech"));
        QVERIFY(!create->okButton()->isEnabled()); // a secret is required
        create->secretEdit()->setText(QStringLiteral("a-secret-of-at-least-32-characters-long"));
        QVERIFY(create->okButton()->isEnabled());
        create->accept();
        QCOMPARE(creates.size(), 1);
        const auto created = creates[0][0].value<TenantChanges>();
        QCOMPARE(created.externalId, QStringLiteral("initech"));
        QCOMPARE(created.jwtSecret, QStringLiteral("a-secret-of-at-least-32-characters-long"));

        selectRow(page->table(), 0); // acme
        QCOMPARE(page->selectedTenant(), QStringLiteral("acme"));
        TenantDialog *edit = page->openEditor(false);
        QCOMPARE(edit->maxUsersBox()->value(), 5000);
        edit->maxUsersBox()->setValue(6000);
        edit->accept();
        QCOMPARE(updates.size(), 1);
        QCOMPARE(updates[0][0].toString(), QStringLiteral("acme"));
        const auto changes = updates[0][1].value<TenantChanges>();
        QCOMPARE(changes.maxConcurrentUsers, 6000);
        QVERIFY(!changes.name); // unchanged fields are not sent
        QVERIFY(!changes.jwtSecret);

        for (QPushButton *button : page->findChildren<QPushButton *>()) {
            if (button->text() == QStringLiteral("&Suspend")) {
                button->click();
            }
        }
        QCOMPARE(suspends.size(), 1);
        QCOMPARE(suspends[0][0].toString(), QStringLiteral("acme"));
        QCOMPARE(suspends[0][1].toBool(), true);
    }

private:
    std::unique_ptr<SnapshotModels> m_models;
    std::unique_ptr<MainWindow> m_window;
};

QTEST_MAIN(DashboardViewsTest)
#include "tst_dashboard_views.moc"
