#pragma once

#include <QSet>
#include <QTimer>
#include <QWidget>

class QSortFilterProxyModel;
class QTableView;

namespace rt::dashboard {

class NodesModel;
class TimeSeriesChart;

// The Nodes view: every node in a table (sortable), and the CPU load of each node over the
// series window as one line per node. Follows the model: a node's line is redrawn when its
// series changed (all changed lines together, on the next turn of the event loop: a snapshot
// changes every node's series at once) and removed when the node left. Lives on the GUI thread.
class NodesPage : public QWidget
{
    Q_OBJECT
public:
    explicit NodesPage(NodesModel *model, QWidget *parent = nullptr);

    QTableView *table() const { return m_table; }
    TimeSeriesChart *loadChart() const { return m_chart; }

    // Lines whose redraw is still due (tests wait for 0).
    qsizetype pendingRedraws() const { return m_dirty.size(); }
    // Lines a redraw adds at most; the rest follow on the next turns. Adding a line to a chart
    // builds its legend entry (a text document): 100 nodes' lines at once held the GUI thread
    // for ~25 ms on top of the table's first sort.
    static constexpr qsizetype MaxNewLinesPerRedraw = 20;

private:
    void noteChanged(const QString &nodeId);
    void redrawChanged();
    void dropDepartedNodes();

    NodesModel *m_model; // not owned (SnapshotModels)
    QSortFilterProxyModel *m_sorted; // child
    QTableView *m_table; // child
    TimeSeriesChart *m_chart; // child
    QSet<QString> m_dirty; // nodes whose line is to be redrawn
    QTimer m_redrawTimer; // zero-interval, single shot
};

} // namespace rt::dashboard
