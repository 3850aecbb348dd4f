#pragma once

#include "dashboard/models/keyed_table_model.h"
#include "dashboard/models/metric_series.h"
#include "shared/api/cluster_snapshot.h"

#include <QHash>

namespace rt::dashboard {

// Messages per second of each tenant on each node, one row per (tenant, node), sorted; plus,
// for the rate chart, each tenant's total rate (in + out over all its nodes) and the cluster's
// total as series over a sliding window. A tenant that stops appearing in the flows gets zero
// samples until nothing but zeros is left in its window, then loses its series. Incremental
// updates as in KeyedTableModel; ratesChanged() once per apply(). Lives on the GUI thread.
class TenantFlowModel : public KeyedTableModel
{
    Q_OBJECT
public:
    enum Column { TenantColumn, NodeColumn, MessagesInColumn, MessagesOutColumn, ColumnCount };
    enum Role {
        TenantRole = FirstModelRole, // QString
        NodeRole, // QString
        MessagesInPerSecondRole, // double
        MessagesOutPerSecondRole, // double
    };

    explicit TenantFlowModel(QObject *parent = nullptr,
                             qint64 seriesWindowMs = MetricSeries::DefaultWindowMs);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;
    std::optional<bool> rowLessThan(int left, int right, int column) const override;

    // A snapshot's update in two halves (see SnapshotModels::applyInSteps()): prepare() only
    // reads and may run on a pool thread, commit() tells the views; apply() is both at once.
    struct Update
    {
        RowPlan<api::TenantFlow> rows;
        std::vector<std::pair<QString, double>> tenantRates; // in + out, all nodes; by tenant
        double totalRate = 0;
        qint64 takenAtMs = 0;
    };
    Update prepare(const api::ClusterSnapshot &snapshot) const;
    RowChanges commit(Update &&update);
    RowChanges apply(const api::ClusterSnapshot &snapshot) { return commit(prepare(snapshot)); }

    int rowOf(const QString &tenant, const QString &node) const; // -1 when unknown
    const api::TenantFlow *flow(int row) const; // valid until the next apply()

    // A tenant's messages/s (in + out, all nodes) over the window; empty when unknown.
    MetricSeries tenantRateSeries(const QString &tenant) const;
    // The sum over every tenant.
    MetricSeries totalRateSeries() const { return m_total; }
    // The tenant's current total rate (0 when it has no flows).
    double tenantRate(const QString &tenant) const;
    // Tenants with series, and the `count` busiest now (highest total rate first; ties by name).
    QStringList tenantsWithSeries() const;
    QStringList busiestTenants(qsizetype count) const;
    qint64 seriesWindowMs() const { return m_seriesWindowMs; }

Q_SIGNALS:
    // The rate series gained their samples for a snapshot.
    void ratesChanged();

private:
    struct TenantRate
    {
        MetricSeries series;
        double current = 0;
        qint64 lastNonZeroAtMs = 0;
    };
    static quint64 changedColumns(const api::TenantFlow &before, const api::TenantFlow &after);
    void updateSeries(const Update &update);

    KeyedRows<api::TenantFlow> m_rows;
    QHash<QString, TenantRate> m_rates;
    MetricSeries m_total;
    qint64 m_seriesWindowMs;
};

} // namespace rt::dashboard
