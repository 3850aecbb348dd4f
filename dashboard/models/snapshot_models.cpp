#include "dashboard/models/snapshot_models.h"

#include <QThread>

namespace rt::dashboard {

SnapshotModels::SnapshotModels(QObject *parent, qint64 seriesWindowMs)
    : QObject(parent),
      m_nodes(new NodesModel(this, seriesWindowMs)),
      m_placement(new PlacementModel(this)),
      m_links(new LinkFlowModel(this)),
      m_tenantFlows(new TenantFlowModel(this, seriesWindowMs)),
      m_config(new ConfigModel(this)),
      m_tenants(new TenantsModel(this))
{ }

SnapshotChanges SnapshotModels::apply(const api::ClusterSnapshot &snapshot)
{
    // Models change only on the thread their views live on.
    Q_ASSERT(QThread::currentThread() == thread());
    SnapshotChanges changes;
    changes.nodes = m_nodes->apply(snapshot);
    changes.placement = m_placement->apply(snapshot);
    changes.links = m_links->apply(snapshot);
    changes.tenantFlows = m_tenantFlows->apply(snapshot);
    changes.config = m_config->apply(snapshot);
    m_hasSnapshot = true;
    m_takenAtMs = snapshot.takenAtMs;
    m_answeredBy = snapshot.answeredBy;
    m_available = snapshot.available;
    m_clientAddresses.clear();
    for (const api::NodeSnapshot &node : snapshot.nodes) {
        m_clientAddresses.insert(node.id, node.clientAddress);
    }
    Q_EMIT snapshotApplied(m_takenAtMs);
    return changes;
}

} // namespace rt::dashboard
