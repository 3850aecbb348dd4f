#include "dashboard/views/flow_page.h"

#include "dashboard/charts/time_series_chart.h"
#include "dashboard/models/link_flow_model.h"
#include "dashboard/models/nodes_model.h"
#include "dashboard/models/snapshot_models.h"
#include "dashboard/models/tenant_flow_model.h"
#include "dashboard/views/busiest_flows_filter.h"
#include "dashboard/widgets/flow_graph.h"

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace rt::dashboard {

namespace {

QTableView *sortedTable(QAbstractItemModel *model, QWidget *parent)
{
    auto *table = new QTableView(parent); // owned by parent
    table->setModel(model);
    table->setSortingEnabled(true);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    return table;
}

} // namespace

FlowPage::FlowPage(SnapshotModels *models, QWidget *parent)
    : QWidget(parent),
      m_models(models),
      m_graph(new FlowGraph(this)),
      m_busiestFlows(new BusiestFlowsFilter(models->tenantFlows(), ShownTenantFlows, this)),
      m_tenantRows(new KeyedSortProxy(this)),
      m_tenantFilter(new QLineEdit(this)),
      m_tenantRowsNote(new QLabel(this)),
      m_rateChart(new TimeSeriesChart(tr("Busiest tenants"), tr("messages/s"), this))
{
    auto *linkRows = new KeyedSortProxy(this); // child
    linkRows->setSourceModel(m_models->links());
    linkRows->setSortRole(KeyedTableModel::SortRole);
    m_linkTable = sortedTable(linkRows, this);
    m_linkTable->sortByColumn(LinkFlowModel::MessagesColumn, Qt::DescendingOrder);

    m_tenantRows->setSourceModel(m_busiestFlows);
    m_tenantRows->setSortRole(KeyedTableModel::SortRole);
    m_tenantTable = sortedTable(m_tenantRows, this);
    m_tenantTable->sortByColumn(TenantFlowModel::MessagesOutColumn, Qt::DescendingOrder);
    m_tenantFilter->setPlaceholderText(tr("Search all tenants"));
    m_tenantRowsNote->setWordWrap(true);
    m_tenantFilter->setClearButtonEnabled(true);
    m_rateChart->setWindowMs(m_models->nodes()->seriesWindowMs());

    auto *tenantSide = new QWidget(this); // owned by the splitter
    auto *tenantLayout = new QVBoxLayout(tenantSide); // owned by tenantSide
    tenantLayout->setContentsMargins(0, 0, 0, 0);
    tenantLayout->addWidget(m_tenantFilter);
    tenantLayout->addWidget(m_tenantTable);
    tenantLayout->addWidget(m_tenantRowsNote);

    auto *top = new QSplitter(Qt::Horizontal, this); // owned by the outer splitter
    top->addWidget(m_graph);
    top->addWidget(m_linkTable);
    auto *bottom = new QSplitter(Qt::Horizontal, this); // owned by the outer splitter
    bottom->addWidget(tenantSide);
    bottom->addWidget(m_rateChart);
    auto *outer = new QSplitter(Qt::Vertical, this); // owned by the layout's widget
    outer->addWidget(top);
    outer->addWidget(bottom);
    auto *layout = new QVBoxLayout(this); // owned by this widget
    layout->addWidget(outer);

    connect(m_tenantFilter, &QLineEdit::textChanged, this, [this](const QString &text) {
        m_busiestFlows->setSearch(text);
        refreshTenantRows();
    });
    connect(m_models, &SnapshotModels::snapshotApplied, this, &FlowPage::refreshGraph);
    connect(m_models->tenantFlows(), &TenantFlowModel::ratesChanged, this,
            &FlowPage::refreshRateChart);
    connect(m_models->tenantFlows(), &TenantFlowModel::ratesChanged, this,
            &FlowPage::refreshTenantRows);
    refreshGraph();
    refreshRateChart();
    refreshTenantRows();
}

void FlowPage::refreshTenantRows()
{
    m_busiestFlows->refreshBusiest();
    m_tenantRowsNote->setVisible(m_busiestFlows->isTrimmed());
    if (m_busiestFlows->isTrimmed()) {
        m_tenantRowsNote->setText(tr("The busiest %1 of %2 tenant flows; search to see any tenant.")
                                          .arg(m_busiestFlows->limit())
                                          .arg(m_busiestFlows->totalFlows()));
    }
}

void FlowPage::refreshGraph()
{
    const LinkFlowModel *links = m_models->links();
    QList<FlowGraph::Edge> edges;
    edges.reserve(links->rowCount());
    for (int row = 0; row < links->rowCount(); ++row) {
        if (const api::LinkFlow *link = links->link(row)) {
            edges.append(FlowGraph::Edge{ link->from, link->to, link->messagesPerSecond });
        }
    }
    m_graph->setGraph(m_models->nodes()->nodeIds(), edges);
}

void FlowPage::refreshRateChart()
{
    const TenantFlowModel *flows = m_models->tenantFlows();
    const QStringList busiest = flows->busiestTenants(ChartedTenants);
    m_rateChart->retainOnly(busiest);
    for (const QString &tenant : busiest) {
        m_rateChart->setSeries(tenant, flows->tenantRateSeries(tenant));
    }
}

} // namespace rt::dashboard
