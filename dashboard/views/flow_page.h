#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace rt::dashboard {

class BusiestFlowsFilter;
class FlowGraph;
class SnapshotModels;
class TimeSeriesChart;

// The Message flow view: the node-to-node graph (edge width follows messages/s), the links and
// per-tenant-per-node rates as tables (the tenant table: the busiest ShownTenantFlows flows, or
// every flow of the tenants searched for), and the busiest tenants' rates over time. Redrawn
// after every snapshot. Lives on the GUI thread.
class FlowPage : public QWidget
{
    Q_OBJECT
public:
    static constexpr int ChartedTenants = 5;
    static constexpr int ShownTenantFlows = 200;

    explicit FlowPage(SnapshotModels *models, QWidget *parent = nullptr);

    FlowGraph *graph() const { return m_graph; }
    QTableView *linkTable() const { return m_linkTable; }
    QTableView *tenantTable() const { return m_tenantTable; }
    QLineEdit *tenantFilter() const { return m_tenantFilter; }
    TimeSeriesChart *rateChart() const { return m_rateChart; }
    // Says how many of the flows the tenant table shows; hidden when it shows them all.
    QLabel *tenantRowsNote() const { return m_tenantRowsNote; }

private:
    void refreshGraph();
    void refreshRateChart();
    void refreshTenantRows();

    SnapshotModels *m_models; // not owned
    FlowGraph *m_graph; // child
    QTableView *m_linkTable; // child
    BusiestFlowsFilter *m_busiestFlows; // child
    QSortFilterProxyModel *m_tenantRows; // child; sorts what m_busiestFlows lets through
    QTableView *m_tenantTable; // child
    QLineEdit *m_tenantFilter; // child
    QLabel *m_tenantRowsNote; // child
    TimeSeriesChart *m_rateChart; // child
};

} // namespace rt::dashboard
