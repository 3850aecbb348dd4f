#include "dashboard/models/snapshot_models.h"

#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include <memory>

namespace rt::dashboard {

SnapshotModels::SnapshotModels(QObject *parent, qint64 seriesWindowMs)
    : QObject(parent),
      m_nodes(new NodesModel(this, seriesWindowMs)),
      m_placement(new PlacementModel(this)),
      m_links(new LinkFlowModel(this)),
      m_tenantFlows(new TenantFlowModel(this, seriesWindowMs)),
      m_config(new ConfigModel(this)),
      m_tenants(new TenantsModel(this)),
      m_preparingWatcher(this)
{
    connect(&m_preparingWatcher, &QFutureWatcher<void>::finished, this,
            &SnapshotModels::onStepPrepared);
}

SnapshotModels::~SnapshotModels()
{
    // A pool thread may still be reading a model's rows (one model's comparison: milliseconds).
    m_preparing.waitForFinished();
}

SnapshotChanges SnapshotModels::apply(const api::ClusterSnapshot &snapshot)
{
    // Models change only on the thread their views live on.
    Q_ASSERT(QThread::currentThread() == thread());
    // Snapshots apply in order: one under way (and the one waiting behind it) goes first, at
    // once. The step being worked out on a pool thread reads its model's rows: let it finish,
    // and do that step again here.
    if (m_current) {
        m_preparing.waitForFinished();
        m_commitStep = nullptr;
        for (Step step = m_nextStep; step != Step::Done; step = Step(int(step) + 1)) {
            applyStep(step, *m_current, m_stepChanges);
        }
        api::releaseInBackground(*std::exchange(m_current, std::nullopt));
        if (m_waiting) {
            SnapshotChanges ignored;
            for (const Step step :
                 { Step::Nodes, Step::Placement, Step::Links, Step::TenantFlows, Step::Config }) {
                applyStep(step, *m_waiting, ignored);
            }
            api::releaseInBackground(*std::exchange(m_waiting, std::nullopt));
        }
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
    beginApplying();
}

void SnapshotModels::beginApplying()
{
    m_nextStep = Step::Nodes;
    m_stepChanges = {};
    prepareNextStep();
}

void SnapshotModels::prepareNextStep()
{
    switch (m_nextStep) {
    case Step::Nodes:
        prepareStep(m_nodes, &SnapshotChanges::nodes);
        return;
    case Step::Placement:
        prepareStep(m_placement, &SnapshotChanges::placement);
        return;
    case Step::Links:
        prepareStep(m_links, &SnapshotChanges::links);
        return;
    case Step::TenantFlows:
        prepareStep(m_tenantFlows, &SnapshotChanges::tenantFlows);
        return;
    case Step::Config:
        prepareStep(m_config, &SnapshotChanges::config);
        return;
    case Step::Done:
        return;
    }
}

template <typename Model>
void SnapshotModels::prepareStep(Model *model, RowChanges SnapshotChanges::*changes)
{
    // The pool thread writes the update, the GUI thread reads it after the future finished.
    auto update = std::make_shared<typename Model::Update>();
    m_preparing = QtConcurrent::run(
            [model, update, snapshot = *m_current] { *update = model->prepare(snapshot); });
    m_commitStep = [this, model, changes, update] {
        m_stepChanges.*changes = model->commit(std::move(*update));
    };
    m_preparingWatcher.setFuture(m_preparing);
}

void SnapshotModels::onStepPrepared()
{
    // A finished() of work that apply() took over, or of an earlier future, is not this step's.
    if (!m_commitStep || !m_preparing.isFinished()) {
        return;
    }
    std::exchange(m_commitStep, nullptr)();
    if (m_nextStep == Step::Config) {
        finishSnapshot(*m_current);
    }
    m_nextStep = Step(int(m_nextStep) + 1);
    if (m_nextStep != Step::Done) {
        prepareNextStep();
        return;
    }
    api::releaseInBackground(*std::exchange(m_current, std::nullopt));
    if (m_waiting) {
        m_current = std::exchange(m_waiting, std::nullopt);
        beginApplying();
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
        finishSnapshot(snapshot);
        return;
    case Step::Done:
        return;
    }
}

void SnapshotModels::finishSnapshot(const api::ClusterSnapshot &snapshot)
{
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
