#pragma once

#include <QWidget>

class QComboBox;
class QLineEdit;
class QTableView;

namespace rt::dashboard {

class NodesModel;
class PlacementFilterProxy;
class PlacementModel;
class NodeFilterProxy;

// The Placement view: one row per tenant with the node that runs its change stream (the
// per-tenant singleton, highlighted) and the nodes holding its clients, filtered by tenant
// name, by region and by node. Lives on the GUI thread.
class PlacementPage : public QWidget
{
    Q_OBJECT
public:
    PlacementPage(PlacementModel *placement, NodesModel *nodes, QWidget *parent = nullptr);
    ~PlacementPage() override;

    QTableView *table() const { return m_table; }
    QLineEdit *tenantFilter() const { return m_tenantFilter; }
    QComboBox *regionFilter() const { return m_regionFilter; }
    QComboBox *nodeFilter() const { return m_nodeFilter; }
    // Rows shown after filtering.
    int visibleRows() const;

private:
    void updateRegions(const QStringList &regions);
    void updateNodes();

    PlacementModel *m_placement; // not owned
    NodesModel *m_nodes; // not owned
    PlacementFilterProxy *m_filter; // child
    NodeFilterProxy *m_byNode; // child
    QLineEdit *m_tenantFilter; // child
    QComboBox *m_regionFilter; // child
    QComboBox *m_nodeFilter; // child
    QTableView *m_table; // child
};

} // namespace rt::dashboard
