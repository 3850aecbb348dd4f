#pragma once

#include "dashboard/models/config_model.h"
#include "dashboard/models/link_flow_model.h"
#include "dashboard/models/nodes_model.h"
#include "dashboard/models/placement_model.h"
#include "dashboard/models/tenant_flow_model.h"
#include "dashboard/models/tenants_model.h"
#include "shared/api/cluster_snapshot.h"

#include <QFuture>
#include <QFutureWatcher>
#include <QObject>

#include <functional>
#include <optional>

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
// push: both are whole ClusterSnapshots) to them, each model updating incrementally. The tenants
// model is fed separately from the tenant API (tenants()->setTenants()). Lives on the GUI
// thread; the models are its children and change only there. While applyInSteps() works out a
// model's update on a pool thread, that thread reads the model's rows; nothing else changes them
// meanwhile (apply() and the destructor wait for it).
class SnapshotModels : public QObject
{
    Q_OBJECT
public:
    explicit SnapshotModels(QObject *parent = nullptr,
                            qint64 seriesWindowMs = MetricSeries::DefaultWindowMs);
    ~SnapshotModels() override;

    // Applies `snapshot` to every model at once (tests, and anything that reads the models
    // right after). A snapshot still being applied in steps is finished first.
    SnapshotChanges apply(const api::ClusterSnapshot &snapshot);
    // Applies `snapshot` one model at a time (nodes, placement, links, tenant flows,
    // configuration): each model's update (the comparison of 10,000s of rows) is worked out on
    // a pool thread, then told to the views on the GUI thread in an event-loop turn of its own,
    // so that what the views do on one model's signals (sorting proxies, charts, repaints) never
    // adds up with the others' into one long stall at 10,000 tenants. snapshotApplied() follows
    // the last step. A snapshot arriving meanwhile waits; of several waiting only the newest is
    // kept (each is a whole picture of the cluster).
    //
    // Each model offers the two halves as `Update prepare(const ClusterSnapshot &) const` (pure
    // with respect to the model: it reads the rows and may run on any thread while nothing else
    // changes that model) and `RowChanges commit(Update &&)` (GUI thread: signals to the views).
    void applyInSteps(const api::ClusterSnapshot &snapshot);
    bool isApplying() const { return m_current.has_value(); }

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
    enum class Step { Nodes, Placement, Links, TenantFlows, Config, Done };
    // Applies one step of `snapshot` at once; after Config the snapshot counts as applied.
    void applyStep(Step step, const api::ClusterSnapshot &snapshot, SnapshotChanges &changes);
    // Starts the snapshot in m_current at its first step.
    void beginApplying();
    // Works out m_nextStep's update for m_current on a pool thread; onStepPrepared() commits it.
    void prepareNextStep();
    template <typename Model>
    void prepareStep(Model *model, RowChanges SnapshotChanges::*changes);
    void onStepPrepared();
    // After Config: the snapshot's own figures, and snapshotApplied().
    void finishSnapshot(const api::ClusterSnapshot &snapshot);

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
    std::optional<api::ClusterSnapshot> m_current; // being applied in steps
    std::optional<api::ClusterSnapshot> m_waiting; // the newest to apply after it
    Step m_nextStep = Step::Nodes;
    SnapshotChanges m_stepChanges;
    QFuture<void> m_preparing; // the pool thread's work on m_nextStep
    QFutureWatcher<void> m_preparingWatcher; // child: finished() -> onStepPrepared()
    std::function<void()> m_commitStep; // tells the views what m_preparing worked out
};

} // namespace rt::dashboard
