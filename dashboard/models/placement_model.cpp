#include "dashboard/models/placement_model.h"

#include <QSet>

namespace rt::dashboard {

PlacementModel::PlacementModel(QObject *parent) : KeyedTableModel(parent) { }

int PlacementModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int PlacementModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QStringList PlacementModel::nodesOf(const Row &row)
{
    QStringList nodes;
    const QHash<QString, qint64> &users = row.placement.usersByNode;
    for (auto it = users.cbegin(); it != users.cend(); ++it) {
        if (it.value() > 0) {
            nodes.append(it.key());
        }
    }
    nodes.sort();
    return nodes;
}

QStringList PlacementModel::regionsOf(const Row &row) const
{
    QStringList regions;
    const auto add = [&](const QString &node) {
        if (const QString region = m_regionOf.value(node);
            !region.isEmpty() && !regions.contains(region)) {
            regions.append(region);
        }
    };
    add(row.placement.streamOwner);
    const QHash<QString, qint64> &users = row.placement.usersByNode;
    for (auto it = users.cbegin(); it != users.cend(); ++it) {
        if (it.value() > 0) {
            add(it.key());
        }
    }
    regions.sort();
    return regions;
}

QString PlacementModel::ownerText(const Row &row) const
{
    const QString &owner = row.placement.streamOwner;
    const QString &state = row.placement.streamState;
    if (owner.isEmpty()) {
        return QStringLiteral("—");
    }
    if (state == QLatin1String("ready")) {
        return tr("%1 (ready)").arg(owner);
    }
    if (state == QLatin1String("starting")) {
        return tr("%1 (starting)").arg(owner);
    }
    if (state.isEmpty()) {
        return owner;
    }
    return QStringLiteral("%1 (%2)").arg(owner, state); // a state of a newer server
}

QVariant PlacementModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Row &row = m_rows[index.row()];
    const api::TenantPlacement &placement = row.placement;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TenantColumn:
            return placement.tenant;
        case StreamOwnerColumn:
            return ownerText(row);
        case NodesColumn:
            return nodesOf(row).join(QStringLiteral(", "));
        case UsersColumn:
            return row.totalUsers;
        default:
            return {};
        }
    case Qt::ToolTipRole:
        if (index.column() == StreamOwnerColumn && placement.streamOwner.isEmpty()) {
            return tr("No change stream runs for this tenant");
        }
        if (index.column() == NodesColumn || index.column() == UsersColumn) {
            QStringList lines;
            for (const QString &node : nodesOf(row)) {
                lines.append(tr("%1: %n user(s)", nullptr, int(placement.usersByNode.value(node)))
                                     .arg(node));
            }
            return lines.join(u'\n');
        }
        return {};
    case Qt::TextAlignmentRole:
        return index.column() == UsersColumn ? numberAlignment() : QVariant();
    case KeyRole:
        return placement.tenant;
    case SortRole:
        switch (index.column()) {
        case StreamOwnerColumn:
            return placement.streamOwner;
        case UsersColumn:
            return row.totalUsers;
        default:
            return data(index, Qt::DisplayRole);
        }
    case StreamOwnerRole:
        return placement.streamOwner;
    case StreamStateRole:
        return placement.streamState;
    case NodesRole:
        return nodesOf(row);
    case UsersByNodeRole: {
        QVariantMap users;
        for (auto it = placement.usersByNode.cbegin(); it != placement.usersByNode.cend(); ++it) {
            users.insert(it.key(), it.value());
        }
        return users;
    }
    case TotalUsersRole:
        return row.totalUsers;
    case RegionsRole:
        return regionsOf(row);
    default:
        return {};
    }
}

QVariant PlacementModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return KeyedTableModel::headerData(section, orientation, role);
    }
    switch (section) {
    case TenantColumn:
        return tr("Tenant");
    case StreamOwnerColumn:
        return tr("Stream owner");
    case NodesColumn:
        return tr("Nodes with clients");
    case UsersColumn:
        return tr("Users");
    default:
        return {};
    }
}

QHash<int, QByteArray> PlacementModel::roleNames() const
{
    QHash<int, QByteArray> names = KeyedTableModel::roleNames();
    names.insert(StreamOwnerRole, QByteArrayLiteral("streamOwner"));
    names.insert(StreamStateRole, QByteArrayLiteral("streamState"));
    names.insert(NodesRole, QByteArrayLiteral("nodes"));
    names.insert(UsersByNodeRole, QByteArrayLiteral("usersByNode"));
    names.insert(TotalUsersRole, QByteArrayLiteral("totalUsers"));
    names.insert(RegionsRole, QByteArrayLiteral("regions"));
    return names;
}

PlacementModel::Update PlacementModel::prepare(const api::ClusterSnapshot &snapshot) const
{
    QHash<QString, QString> regionOf;
    regionOf.reserve(snapshot.nodes.size());
    QStringList regions;
    for (const api::NodeSnapshot &node : snapshot.nodes) {
        regionOf.insert(node.id, node.region);
        if (!node.region.isEmpty()) {
            regions.append(node.region);
        }
    }
    regions.sort();
    regions.removeDuplicates();
    // Nodes that came, went or changed region change the regions of the tenants on them.
    QSet<QString> regionMoved;
    for (auto it = regionOf.cbegin(); it != regionOf.cend(); ++it) {
        if (m_regionOf.value(it.key()) != it.value()) {
            regionMoved.insert(it.key());
        }
    }
    for (auto it = m_regionOf.cbegin(); it != m_regionOf.cend(); ++it) {
        if (!regionOf.contains(it.key())) {
            regionMoved.insert(it.key());
        }
    }
    const auto touchesMovedNode = [&regionMoved](const api::TenantPlacement &placement) {
        if (regionMoved.contains(placement.streamOwner)) {
            return true;
        }
        for (auto it = placement.usersByNode.cbegin(); it != placement.usersByNode.cend(); ++it) {
            if (regionMoved.contains(it.key())) {
                return true;
            }
        }
        return false;
    };
    const auto changedColumns = [&](const Row &before, const Row &after) {
        const api::TenantPlacement &a = before.placement;
        const api::TenantPlacement &b = after.placement;
        const bool usersChanged = a.usersByNode != b.usersByNode;
        // Users per node and regions have no column of their own: they show in the nodes and
        // users columns (tooltips) and in the filter, so they count as those columns.
        const bool regionsChanged =
                !regionMoved.isEmpty() && (touchesMovedNode(a) || touchesMovedNode(b));
        return columnIf(a.streamOwner != b.streamOwner || a.streamState != b.streamState,
                        StreamOwnerColumn)
                | columnIf(usersChanged || regionsChanged, NodesColumn)
                | columnIf(usersChanged || before.totalUsers != after.totalUsers, UsersColumn);
    };

    std::vector<Row> next;
    next.reserve(std::size_t(snapshot.tenants.size()));
    for (const api::TenantPlacement &placement : snapshot.tenants) {
        qint64 total = 0;
        for (const qint64 users : placement.usersByNode) {
            total += std::max<qint64>(users, 0);
        }
        next.push_back(Row{ placement, total });
    }
    RowPlan<Row> plan = planRows(
            m_rows, std::move(next),
            [](const Row &row) -> const QString & { return row.placement.tenant; }, changedColumns);
    return Update{ std::move(plan), std::move(regionOf), std::move(regions) };
}

std::optional<bool> PlacementModel::rowLessThan(int left, int right, int column) const
{
    const Row &a = m_rows[left];
    const Row &b = m_rows[right];
    switch (column) {
    case TenantColumn:
        // The rows are sorted by tenant, a unique key: their order is the tenants' (and no
        // string is compared; 10,000 tenants' first sort made ~130,000 comparisons).
        return left < right;
    case StreamOwnerColumn:
        return a.placement.streamOwner < b.placement.streamOwner;
    case UsersColumn:
        return a.totalUsers < b.totalUsers;
    default:
        return std::nullopt;
    }
}

RowChanges PlacementModel::commit(Update &&update)
{
    // The regions the rows show from now on (also while the views hear of the changes).
    m_regionOf = std::move(update.regionOf);
    const RowChanges changes = applyPlan(m_rows, std::move(update.rows));
    if (update.regions != m_regions) {
        m_regions = std::move(update.regions);
        Q_EMIT regionsChanged(m_regions);
    }
    return changes;
}

int PlacementModel::rowOf(const QString &tenantName) const
{
    const auto it = std::lower_bound(
            m_rows.begin(), m_rows.end(), tenantName,
            [](const Row &row, const QString &name) { return row.placement.tenant < name; });
    return it != m_rows.end() && it->placement.tenant == tenantName ? int(it - m_rows.begin()) : -1;
}

QString PlacementModel::tenant(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows[row].placement.tenant : QString();
}

QStringList PlacementModel::tenantsOwnedBy(const QString &nodeId) const
{
    QStringList result;
    for (const Row &row : m_rows) {
        if (row.placement.streamOwner == nodeId) {
            result.append(row.placement.tenant);
        }
    }
    return result;
}

QStringList PlacementModel::tenantsWithClientsOn(const QString &nodeId) const
{
    QStringList result;
    for (const Row &row : m_rows) {
        if (row.placement.usersByNode.value(nodeId) > 0) {
            result.append(row.placement.tenant);
        }
    }
    return result;
}

PlacementFilterProxy::PlacementFilterProxy(QObject *parent) : KeyedSortProxy(parent)
{
    setSortRole(KeyedTableModel::SortRole);
}

void PlacementFilterProxy::setTenantFilter(const QString &substring)
{
    if (substring == m_tenantFilter) {
        return;
    }
    m_tenantFilter = substring;
    invalidateFilter();
}

void PlacementFilterProxy::setRegionFilter(const QString &region)
{
    if (region == m_region) {
        return;
    }
    m_region = region;
    invalidateFilter();
}

bool PlacementFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    if (!m_tenantFilter.isEmpty()
        && !index.data(KeyedTableModel::KeyRole)
                    .toString()
                    .contains(m_tenantFilter, Qt::CaseInsensitive)) {
        return false;
    }
    return m_region.isEmpty()
            || index.data(PlacementModel::RegionsRole).toStringList().contains(m_region);
}

} // namespace rt::dashboard
