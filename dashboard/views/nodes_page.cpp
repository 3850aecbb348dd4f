#include "dashboard/views/nodes_page.h"

#include "dashboard/charts/time_series_chart.h"
#include "dashboard/models/metric_series.h"
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
      m_chart(new TimeSeriesChart(tr("CPU load per node"), tr("5-minute load average"), this)),
      m_redrawTimer(this)
{
    m_redrawTimer.setSingleShot(true);
    m_redrawTimer.setInterval(0);
    connect(&m_redrawTimer, &QTimer::timeout, this, &NodesPage::redrawChanged);
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

    connect(m_model, &NodesModel::seriesChanged, this, &NodesPage::noteChanged);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &NodesPage::dropDepartedNodes);
    connect(m_model, &QAbstractItemModel::modelReset, this, &NodesPage::dropDepartedNodes);
    for (const QString &nodeId : m_model->nodeIds()) {
        noteChanged(nodeId);
    }
}

void NodesPage::noteChanged(const QString &nodeId)
{
    m_dirty.insert(nodeId);
    m_redrawTimer.start();
}

void NodesPage::redrawChanged()
{
    QList<std::pair<QString, MetricSeries>> lines;
    lines.reserve(m_dirty.size());
    for (const QString &nodeId : std::as_const(m_dirty)) {
        if (m_model->rowOf(nodeId) >= 0) { // still there
            lines.append({ nodeId, m_model->loadSeries(nodeId) });
        }
    }
    m_dirty.clear();
    m_chart->setManySeries(lines);
}

void NodesPage::dropDepartedNodes()
{
    m_chart->retainOnly(m_model->nodeIds());
}

} // namespace rt::dashboard
