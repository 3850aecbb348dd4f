#include "dashboard/views/nodes_page.h"

#include "dashboard/charts/time_series_chart.h"
#include "dashboard/models/nodes_model.h"

#include <QHeaderView>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace rt::dashboard {

NodesPage::NodesPage(NodesModel *model, QWidget *parent)
    : QWidget(parent),
      m_model(model),
      m_sorted(new QSortFilterProxyModel(this)),
      m_table(new QTableView(this)),
      m_chart(new TimeSeriesChart(tr("CPU load per node"), tr("5-minute load average"), this))
{
    m_sorted->setSourceModel(m_model);
    m_sorted->setSortRole(KeyedTableModel::SortRole);
    m_table->setModel(m_sorted);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(NodesModel::IdColumn, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_chart->setWindowMs(m_model->seriesWindowMs());

    auto *splitter = new QSplitter(Qt::Vertical, this); // NOLINT: owned by the layout's widget
    splitter->addWidget(m_table);
    splitter->addWidget(m_chart);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this); // NOLINT: owned by this widget
    layout->addWidget(splitter);

    connect(m_model, &NodesModel::seriesChanged, this, &NodesPage::redrawNode);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &NodesPage::dropDepartedNodes);
    connect(m_model, &QAbstractItemModel::modelReset, this, &NodesPage::dropDepartedNodes);
    for (const QString &nodeId : m_model->nodeIds()) {
        redrawNode(nodeId);
    }
}

void NodesPage::redrawNode(const QString &nodeId)
{
    m_chart->setSeries(nodeId, m_model->loadSeries(nodeId));
}

void NodesPage::dropDepartedNodes()
{
    m_chart->retainOnly(m_model->nodeIds());
}

} // namespace rt::dashboard
