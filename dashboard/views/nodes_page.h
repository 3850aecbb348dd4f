#pragma once

#include <QWidget>

class QSortFilterProxyModel;
class QTableView;

namespace rt::dashboard {

class NodesModel;
class TimeSeriesChart;

// The Nodes view: every node in a table (sortable), and the CPU load of each node over the
// series window as one line per node. Follows the model: a node's line is redrawn when its
// series changed and removed when the node left. Lives on the GUI thread.
class NodesPage : public QWidget
{
    Q_OBJECT
public:
    explicit NodesPage(NodesModel *model, QWidget *parent = nullptr);

    QTableView *table() const { return m_table; }
    TimeSeriesChart *loadChart() const { return m_chart; }

private:
    void redrawNode(const QString &nodeId);
    void dropDepartedNodes();

    NodesModel *m_model; // not owned (SnapshotModels)
    QSortFilterProxyModel *m_sorted; // child
    QTableView *m_table; // child
    TimeSeriesChart *m_chart; // child
};

} // namespace rt::dashboard
