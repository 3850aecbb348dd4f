#pragma once

#include "dashboard/models/keyed_table_model.h"
#include "shared/api/cluster_snapshot.h"

#include <QSortFilterProxyModel>
#include <QStringList>

namespace rt::dashboard {

// Where each tenant lives, one row per tenant (sorted by name): the node running its change
// stream (the per-tenant singleton) with the stream's state, the nodes holding its clients, and
// its users in total and per node (UsersByNodeRole). Each row also knows the regions it touches
// (its owner's and its client nodes'), for PlacementFilterProxy. Incremental updates as in
// KeyedTableModel. Lives on the GUI thread.
class PlacementModel : public KeyedTableModel
{
    Q_OBJECT
public:
    enum Column { TenantColumn, StreamOwnerColumn, NodesColumn, UsersColumn, ColumnCount };
    enum Role {
        StreamOwnerRole = FirstModelRole, // QString node id, empty: no stream runs
        StreamStateRole, // QString "starting" | "ready" | empty
        NodesRole, // QStringList: nodes holding clients (users > 0), sorted
        UsersByNodeRole, // QVariantMap node id -> qint64 users
        TotalUsersRole, // qint64
        RegionsRole, // QStringList: regions of the owner and of the client nodes, sorted
    };

    explicit PlacementModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;
    std::optional<bool> rowLessThan(int left, int right, int column) const override;

private:
    // The snapshot's placement as it came (implicitly shared, so cheap to keep): the node list
    // and the regions are worked out when asked for, not for 10,000 rows per snapshot.
    struct Row
    {
        api::TenantPlacement placement;
        qint64 totalUsers = 0;
    };

public:
    // A snapshot's update in two halves (see SnapshotModels::applyInSteps()): prepare() only
    // reads and may run on a pool thread, commit() tells the views; apply() is both at once.
    struct Update
    {
        RowPlan<Row> rows;
        QHash<QString, QString> regionOf; // node id -> region
        QStringList regions;
    };
    // Takes the snapshot's tenants; node regions come from its nodes.
    Update prepare(const api::ClusterSnapshot &snapshot) const;
    RowChanges commit(Update &&update);
    RowChanges apply(const api::ClusterSnapshot &snapshot) { return commit(prepare(snapshot)); }

    int rowOf(const QString &tenant) const; // -1 when unknown
    QString tenant(int row) const;
    // Every region of the snapshot's nodes, sorted (for a region filter's choices).
    QStringList regions() const { return m_regions; }
    // Tenants whose stream `nodeId` runs, and tenants with clients on it (sorted).
    QStringList tenantsOwnedBy(const QString &nodeId) const;
    QStringList tenantsWithClientsOn(const QString &nodeId) const;

Q_SIGNALS:
    void regionsChanged(const QStringList &regions);

private:
    static QStringList nodesOf(const Row &row); // users > 0, sorted
    QStringList regionsOf(const Row &row) const;
    QString ownerText(const Row &row) const;

    KeyedRows<Row> m_rows;
    QHash<QString, QString> m_regionOf; // node id -> region, of the last snapshot
    QStringList m_regions;
};

// Filters a PlacementModel by a tenant-name substring (case-insensitive) and by region: a tenant
// is in a region when its stream owner or a node holding its clients is. Sorts by SortRole.
// Lives on the GUI thread.
class PlacementFilterProxy : public KeyedSortProxy
{
    Q_OBJECT
public:
    explicit PlacementFilterProxy(QObject *parent = nullptr);

    QString tenantFilter() const { return m_tenantFilter; }
    QString regionFilter() const { return m_region; }

    // NOLINTNEXTLINE(readability-redundant-access-specifiers): Q_SLOTS tells moc these are slots
public Q_SLOTS:
    void setTenantFilter(const QString &substring); // empty: every tenant
    void setRegionFilter(const QString &region); // empty: every region

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    QString m_tenantFilter;
    QString m_region;
};

} // namespace rt::dashboard
