#pragma once

#include "dashboard/models/keyed_table_model.h"
#include "shared/api/cluster_snapshot.h"

namespace rt::dashboard {

// The cluster configuration as the snapshot shows it: one row per key (sorted), with the value's
// JSON text, the revision that last changed it (what a compare-and-swap edit sends back) and
// whether it is a temporary override and until when (once the answering node knows); plus the
// configuration's revision. Incremental updates as
// in KeyedTableModel. Lives on the GUI thread.
class ConfigModel : public KeyedTableModel
{
    Q_OBJECT
public:
    enum Column { KeyColumn, ValueColumn, RevisionColumn, TemporaryColumn, ColumnCount };
    enum Role {
        ValueRole = FirstModelRole, // QByteArray: the JSON text as stored
        RevisionRole, // qint64: the entry's modification revision
        TemporaryRole, // bool
        ExpiresAtRole, // QDateTime: when a temporary override ends; invalid QVariant: unknown
    };

    explicit ConfigModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    // A snapshot's update in two halves (see SnapshotModels::applyInSteps()): prepare() only
    // reads and may run on a pool thread, commit() tells the views; apply() is both at once.
    struct Update
    {
        RowPlan<api::ConfigValue> rows;
        qint64 revision = 0;
    };
    Update prepare(const api::ClusterSnapshot &snapshot) const;
    RowChanges commit(Update &&update);
    RowChanges apply(const api::ClusterSnapshot &snapshot) { return commit(prepare(snapshot)); }

    qint64 revision() const { return m_revision; } // the whole configuration's
    int rowOf(const QString &key) const; // -1 when unknown
    const api::ConfigValue *entry(const QString &key) const; // valid until the next apply()

Q_SIGNALS:
    void revisionChanged(qint64 revision);

private:
    static quint64 changedColumns(const api::ConfigValue &before, const api::ConfigValue &after);

    KeyedRows<api::ConfigValue> m_rows;
    qint64 m_revision = 0;
};

} // namespace rt::dashboard
