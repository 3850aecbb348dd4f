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
      m_sorted(new KeyedSortProxy(this)),
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
    // Fit the rows in view, not the first 1,000: laying out the text of 100 nodes' cells on
    // every update and page switch held the GUI thread for ~15 ms.
    m_table->horizontalHeader()->setResizeContentsPrecision(0);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_chart->setWindowMs(m_model->seriesWindowMs());

    auto *splitter = new QSplitter(Qt::Vertical, this); // owned by the layout's widget
    splitter->addWidget(m_table);
    splitter->addWidget(m_chart);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this); // owned by this widget
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
    qsizetype newLines = 0;
    for (auto it = m_dirty.begin(); it != m_dirty.end();) {
        const QString &nodeId = *it;
        if (m_model->rowOf(nodeId) < 0) { // gone meanwhile
            it = m_dirty.erase(it);
            continue;
        }
        if (m_chart->pointCount(nodeId) < 0 && ++newLines > MaxNewLinesPerRedraw) {
            ++it; // next turn
            continue;
        }
        lines.append({ nodeId, m_model->loadSeries(nodeId) });
        it = m_dirty.erase(it);
    }
    m_chart->setManySeries(lines);
    if (!m_dirty.isEmpty()) {
        m_redrawTimer.start();
    }
}

void NodesPage::dropDepartedNodes()
{
    m_chart->retainOnly(m_model->nodeIds());
}

} // namespace rt::dashboard
