#include "dashboard/models/tenants_model.h"

#include <QLocale>

namespace rt::dashboard {

namespace {

const QString &keyOf(const api::TenantSummary &tenant)
{
    return tenant.externalId;
}

QStringList extensionTypes(const api::TenantSummary &tenant)
{
    QStringList types;
    for (const api::TenantExtensionSummary &extension : tenant.extensions) {
        types.append(extension.type);
    }
    return types;
}

} // namespace

TenantsModel::TenantsModel(QObject *parent) : KeyedTableModel(parent) { }

int TenantsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int TenantsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TenantsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const api::TenantSummary &tenant = m_rows[qsizetype(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case ExternalIdColumn:
            return tenant.externalId;
        case NameColumn:
            return tenant.name.value_or(QString());
        case MaxUsersColumn:
            return tenant.maxConcurrentUsers;
        case MaxChannelsPerClientColumn:
            return tenant.maxChannelsPerClient;
        case MaxEventsPerSecondColumn:
            return tenant.maxEventsPerSecond;
        case MaxJoinsPerSecondColumn:
            return tenant.maxJoinsPerSecond;
        case PrivateOnlyColumn:
            return tenant.privateOnly ? tr("Yes") : tr("No");
        case PresenceEnabledColumn:
            return tenant.presenceEnabled ? tr("Yes") : tr("No");
        case ExtensionsColumn:
            return extensionTypes(tenant).join(QStringLiteral(", "));
        case InsertedAtColumn:
            return tenant.insertedAt.isValid()
                    ? QLocale().toString(tenant.insertedAt.toLocalTime(), QLocale::ShortFormat)
                    : QString();
        default:
            return {};
        }
    case Qt::TextAlignmentRole:
        return index.column() >= MaxUsersColumn && index.column() <= MaxJoinsPerSecondColumn
                ? numberAlignment()
                : QVariant();
    case KeyRole:
        return tenant.externalId;
    case SortRole:
        switch (index.column()) {
        case PrivateOnlyColumn:
            return tenant.privateOnly;
        case PresenceEnabledColumn:
            return tenant.presenceEnabled;
        case InsertedAtColumn:
            return tenant.insertedAt;
        default:
            return data(index, Qt::DisplayRole);
        }
    case IdRole:
        return tenant.id;
    case ExtensionTypesRole:
        return extensionTypes(tenant);
    default:
        return {};
    }
}

QVariant TenantsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return KeyedTableModel::headerData(section, orientation, role);
    }
    switch (section) {
    case ExternalIdColumn:
        return tr("Tenant");
    case NameColumn:
        return tr("Name");
    case MaxUsersColumn:
        return tr("Max users");
    case MaxChannelsPerClientColumn:
        return tr("Max channels per client");
    case MaxEventsPerSecondColumn:
        return tr("Max events/s");
    case MaxJoinsPerSecondColumn:
        return tr("Max joins/s");
    case PrivateOnlyColumn:
        return tr("Private only");
    case PresenceEnabledColumn:
        return tr("Presence");
    case ExtensionsColumn:
        return tr("Extensions");
    case InsertedAtColumn:
        return tr("Created");
    default:
        return {};
    }
}

QHash<int, QByteArray> TenantsModel::roleNames() const
{
    QHash<int, QByteArray> names = KeyedTableModel::roleNames();
    names.insert(IdRole, QByteArrayLiteral("id"));
    names.insert(ExtensionTypesRole, QByteArrayLiteral("extensionTypes"));
    return names;
}

quint64 TenantsModel::changedColumns(const api::TenantSummary &before,
                                     const api::TenantSummary &after)
{
    // Fields without a column of their own (id, presence windows, extension settings) count as
    // the name column, so that an edit of them still reaches the views.
    return columnIf(before.name != after.name || before.id != after.id
                            || before.maxClientPresenceEventsPerWindow
                                    != after.maxClientPresenceEventsPerWindow
                            || before.clientPresenceWindowMs != after.clientPresenceWindowMs,
                    NameColumn)
            | columnIf(before.maxConcurrentUsers != after.maxConcurrentUsers, MaxUsersColumn)
            | columnIf(before.maxChannelsPerClient != after.maxChannelsPerClient,
                       MaxChannelsPerClientColumn)
            | columnIf(before.maxEventsPerSecond != after.maxEventsPerSecond,
                       MaxEventsPerSecondColumn)
            | columnIf(before.maxJoinsPerSecond != after.maxJoinsPerSecond, MaxJoinsPerSecondColumn)
            | columnIf(before.privateOnly != after.privateOnly, PrivateOnlyColumn)
            | columnIf(before.presenceEnabled != after.presenceEnabled, PresenceEnabledColumn)
            | columnIf(before.extensions != after.extensions, ExtensionsColumn)
            | columnIf(before.insertedAt != after.insertedAt, InsertedAtColumn);
}

RowChanges TenantsModel::setTenants(const QList<api::TenantSummary> &tenants)
{
    std::vector<api::TenantSummary> next(tenants.cbegin(), tenants.cend());
    return applyRows(m_rows, std::move(next), &keyOf, &TenantsModel::changedColumns);
}

RowChanges TenantsModel::upsertTenant(const api::TenantSummary &tenant)
{
    std::vector<api::TenantSummary> next(m_rows.begin(), m_rows.end());
    const int row = rowOf(tenant.externalId);
    if (row >= 0) {
        next[std::size_t(row)] = tenant;
    } else {
        next.push_back(tenant);
    }
    return applyRows(m_rows, std::move(next), &keyOf, &TenantsModel::changedColumns);
}

RowChanges TenantsModel::removeTenant(const QString &externalId)
{
    std::vector<api::TenantSummary> next(m_rows.begin(), m_rows.end());
    const int row = rowOf(externalId);
    if (row < 0) {
        return {};
    }
    next.erase(next.begin() + row);
    return applyRows(m_rows, std::move(next), &keyOf, &TenantsModel::changedColumns);
}

int TenantsModel::rowOf(const QString &externalId) const
{
    const auto it = std::lower_bound(m_rows.begin(), m_rows.end(), externalId,
                                     [](const api::TenantSummary &row, const QString &wanted) {
                                         return row.externalId < wanted;
                                     });
    return it != m_rows.end() && it->externalId == externalId ? int(it - m_rows.begin()) : -1;
}

api::TenantSummary TenantsModel::tenant(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows[qsizetype(row)] : api::TenantSummary();
}

QList<api::TenantSummary> TenantsModel::tenants() const
{
    return { m_rows.begin(), m_rows.end() };
}

} // namespace rt::dashboard
