#pragma once

#include <QWidget>

class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace rt::dashboard {

class FlowGraph;
class SnapshotModels;
class TimeSeriesChart;

// The Message flow view: the node-to-node graph (edge width follows messages/s), the links and
// per-tenant-per-node rates as tables, and the busiest tenants' rates over time. Redrawn after
// every snapshot. Lives on the GUI thread.
class FlowPage : public QWidget
{
    Q_OBJECT
public:
    static constexpr int ChartedTenants = 5;

    explicit FlowPage(SnapshotModels *models, QWidget *parent = nullptr);

    FlowGraph *graph() const { return m_graph; }
    QTableView *linkTable() const { return m_linkTable; }
    QTableView *tenantTable() const { return m_tenantTable; }
    QLineEdit *tenantFilter() const { return m_tenantFilter; }
    TimeSeriesChart *rateChart() const { return m_rateChart; }

private:
    void refreshGraph();
    void refreshRateChart();

    SnapshotModels *m_models; // not owned
    FlowGraph *m_graph; // child
    QTableView *m_linkTable; // child
    QSortFilterProxyModel *m_tenantRows; // child
    QTableView *m_tenantTable; // child
    QLineEdit *m_tenantFilter; // child
    TimeSeriesChart *m_rateChart; // child
};

} // namespace rt::dashboard
