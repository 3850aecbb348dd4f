#pragma once

#include "dashboard/models/config_model.h"
#include "dashboard/models/link_flow_model.h"
#include "dashboard/models/nodes_model.h"
#include "dashboard/models/placement_model.h"
#include "dashboard/models/tenant_flow_model.h"
#include "dashboard/models/tenants_model.h"
#include "shared/api/cluster_snapshot.h"

#include <QObject>

namespace rt::dashboard {

// What one apply() changed, per model.
struct SnapshotChanges
{
    RowChanges nodes;
    RowChanges placement;
    RowChanges links;
    RowChanges tenantFlows;
    RowChanges config;
};

// Owns the dashboard's models and applies each cluster snapshot (full snapshot or live-feed
// push: both are whole ClusterSnapshots) to all of them in one go on the GUI thread, each model
// updating incrementally. The tenants model is fed separately from the tenant API
// (tenants()->setTenants()). Lives on the GUI thread; the models are its children.
class SnapshotModels : public QObject
{
    Q_OBJECT
public:
    explicit SnapshotModels(QObject *parent = nullptr,
                            qint64 seriesWindowMs = MetricSeries::DefaultWindowMs);

    SnapshotChanges apply(const api::ClusterSnapshot &snapshot);

    NodesModel *nodes() const { return m_nodes; }
    PlacementModel *placement() const { return m_placement; }
    LinkFlowModel *links() const { return m_links; }
    TenantFlowModel *tenantFlows() const { return m_tenantFlows; }
    ConfigModel *config() const { return m_config; }
    TenantsModel *tenants() const { return m_tenants; }

    bool hasSnapshot() const { return m_hasSnapshot; }
    qint64 takenAtMs() const { return m_takenAtMs; } // of the last snapshot applied
    QString answeredBy() const { return m_answeredBy; }
    bool isBackendAvailable() const { return m_available; } // the answering node reaches etcd
    // The client addresses of the last snapshot's nodes, by node id (where to fail over to).
    QHash<QString, QString> clientAddresses() const { return m_clientAddresses; }

Q_SIGNALS:
    // Every model has taken the snapshot.
    void snapshotApplied(qint64 takenAtMs);

private:
    NodesModel *m_nodes; // child
    PlacementModel *m_placement; // child
    LinkFlowModel *m_links; // child
    TenantFlowModel *m_tenantFlows; // child
    ConfigModel *m_config; // child
    TenantsModel *m_tenants; // child
    bool m_hasSnapshot = false;
    qint64 m_takenAtMs = 0;
    QString m_answeredBy;
    bool m_available = false;
    QHash<QString, QString> m_clientAddresses;
};

} // namespace rt::dashboard
