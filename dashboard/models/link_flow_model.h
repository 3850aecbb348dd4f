#pragma once

#include "dashboard/models/keyed_table_model.h"
#include "shared/api/cluster_snapshot.h"

namespace rt::dashboard {

// Messages and bytes per second over each node-to-node link direction, one row per from -> to
// (sorted by from, then to): the edges of the message-flow graph, whose weight follows
// MessagesPerSecondRole. Incremental updates as in KeyedTableModel. Lives on the GUI thread.
class LinkFlowModel : public KeyedTableModel
{
    Q_OBJECT
public:
    enum Column { FromColumn, ToColumn, MessagesColumn, BytesColumn, ColumnCount };
    enum Role {
        FromRole = FirstModelRole, // QString node id
        ToRole, // QString node id
        MessagesPerSecondRole, // double
        BytesPerSecondRole, // double
    };

    explicit LinkFlowModel(QObject *parent = nullptr);

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
        RowPlan<api::LinkFlow> rows;
        double maxMessagesPerSecond = 0;
    };
    Update prepare(const api::ClusterSnapshot &snapshot) const;
    RowChanges commit(Update &&update);
    RowChanges apply(const api::ClusterSnapshot &snapshot) { return commit(prepare(snapshot)); }

    int rowOf(const QString &from, const QString &to) const; // -1 when unknown
    const api::LinkFlow *link(int row) const; // valid until the next apply()
    // The busiest link's messages/s (0 without links): what an edge's width is relative to.
    double maxMessagesPerSecond() const { return m_maxMessagesPerSecond; }

private:
    static quint64 changedColumns(const api::LinkFlow &before, const api::LinkFlow &after);

    KeyedRows<api::LinkFlow> m_rows;
    double m_maxMessagesPerSecond = 0;
};

} // namespace rt::dashboard
