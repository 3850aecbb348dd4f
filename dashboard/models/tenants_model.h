#pragma once

#include "dashboard/models/keyed_table_model.h"
#include "shared/api/tenant_summary.h"

namespace rt::dashboard {

// The tenants of the tenant management API (GET /api/tenants), one row per external id, sorted.
// setTenants() replaces the list incrementally (see KeyedTableModel); upsertTenant() and
// removeTenant() record the answer of a create, edit or delete without waiting for the next
// list. Lives on the GUI thread.
class TenantsModel : public KeyedTableModel
{
    Q_OBJECT
public:
    enum Column {
        ExternalIdColumn,
        NameColumn,
        MaxUsersColumn,
        MaxChannelsPerClientColumn,
        MaxEventsPerSecondColumn,
        MaxJoinsPerSecondColumn,
        PrivateOnlyColumn,
        PresenceEnabledColumn,
        ExtensionsColumn,
        InsertedAtColumn,
        ColumnCount
    };
    enum Role {
        IdRole = FirstModelRole, // QString uuid
        ExtensionTypesRole, // QStringList
    };

    explicit TenantsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    RowChanges setTenants(const QList<api::TenantSummary> &tenants);
    RowChanges upsertTenant(const api::TenantSummary &tenant);
    RowChanges removeTenant(const QString &externalId);

    int rowOf(const QString &externalId) const; // -1 when unknown
    // The tenant of a row; a default-constructed one for a bad row.
    api::TenantSummary tenant(int row) const;
    QList<api::TenantSummary> tenants() const;

private:
    static quint64 changedColumns(const api::TenantSummary &before,
                                  const api::TenantSummary &after);

    KeyedRows<api::TenantSummary> m_rows;
};

} // namespace rt::dashboard
