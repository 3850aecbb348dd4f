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
      m_tenants(new TenantsModel(this)),
      m_stepTimer(this)
{
    m_stepTimer.setSingleShot(true);
    m_stepTimer.setInterval(0);
    connect(&m_stepTimer, &QTimer::timeout, this, &SnapshotModels::runNextStep);
}

SnapshotChanges SnapshotModels::apply(const api::ClusterSnapshot &snapshot)
{
    // Models change only on the thread their views live on.
    Q_ASSERT(QThread::currentThread() == thread());
    // Snapshots apply in order: one under way (and the one waiting behind it) goes first.
    while (m_current) {
        runNextStep();
    }
    SnapshotChanges changes;
    for (const Step step :
         { Step::Nodes, Step::Placement, Step::Links, Step::TenantFlows, Step::Config }) {
        applyStep(step, snapshot, changes);
    }
    return changes;
}

void SnapshotModels::applyInSteps(const api::ClusterSnapshot &snapshot)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_current) {
        if (m_waiting) {
            api::releaseInBackground(*std::exchange(m_waiting, snapshot));
        } else {
            m_waiting = snapshot;
        }
        return;
    }
    m_current = snapshot;
    m_nextStep = Step::Nodes;
    m_stepChanges = {};
    m_stepTimer.start();
}

void SnapshotModels::runNextStep()
{
    if (!m_current) {
        return;
    }
    m_stepTimer.stop();
    applyStep(m_nextStep, *m_current, m_stepChanges);
    m_nextStep = Step(int(m_nextStep) + 1);
    if (m_nextStep != Step::Done) {
        m_stepTimer.start();
        return;
    }
    api::releaseInBackground(*std::exchange(m_current, std::nullopt));
    if (m_waiting) {
        m_current = std::exchange(m_waiting, std::nullopt);
        m_nextStep = Step::Nodes;
        m_stepChanges = {};
        m_stepTimer.start();
    }
}

void SnapshotModels::applyStep(Step step, const api::ClusterSnapshot &snapshot,
                               SnapshotChanges &changes)
{
    switch (step) {
    case Step::Nodes:
        changes.nodes = m_nodes->apply(snapshot);
        return;
    case Step::Placement:
        changes.placement = m_placement->apply(snapshot);
        return;
    case Step::Links:
        changes.links = m_links->apply(snapshot);
        return;
    case Step::TenantFlows:
        changes.tenantFlows = m_tenantFlows->apply(snapshot);
        return;
    case Step::Config:
        changes.config = m_config->apply(snapshot);
        break;
    case Step::Done:
        return;
    }
    m_hasSnapshot = true;
    m_takenAtMs = snapshot.takenAtMs;
    m_answeredBy = snapshot.answeredBy;
    m_available = snapshot.available;
    m_clientAddresses.clear();
    for (const api::NodeSnapshot &node : snapshot.nodes) {
        m_clientAddresses.insert(node.id, node.clientAddress);
    }
    Q_EMIT snapshotApplied(m_takenAtMs);
}

} // namespace rt::dashboard
