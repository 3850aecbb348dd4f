#pragma once

#include "dashboard/models/keyed_table_model.h"
#include "dashboard/models/metric_series.h"
#include "shared/api/cluster_snapshot.h"

#include <QHash>

namespace rt::dashboard {

// One row per cluster node (sorted by id) from the latest snapshot, plus a load history and
// message-rate history per node over a sliding window for the charts. apply() updates rows
// incrementally (see KeyedTableModel) and then emits seriesChanged() for every node whose series
// gained a sample. A node that leaves the snapshot loses its row and its series. Lives on the GUI
// thread.
class NodesModel : public KeyedTableModel
{
    Q_OBJECT
public:
    enum Column {
        IdColumn,
        RegionColumn,
        ClientAddressColumn,
        UptimeColumn,
        LoadColumn,
        ConnectionsColumn,
        ChannelsColumn,
        MessagesInColumn,
        MessagesOutColumn,
        AvailableColumn,
        ColumnCount
    };
    enum Role {
        LoadRole = FirstModelRole, // double, or an invalid QVariant for "not enough data"
        AvailableRole, // bool
        RegionRole, // QString
        UptimeMsRole, // qint64
    };

    explicit NodesModel(QObject *parent = nullptr,
                        qint64 seriesWindowMs = MetricSeries::DefaultWindowMs);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

private:
    struct Row
    {
        api::NodeSnapshot node;
        qint64 uptimeMs = 0;
    };

public:
    // A snapshot's update in two halves (see SnapshotModels::applyInSteps()): prepare() only
    // reads and may run on a pool thread, commit() tells the views; apply() is both at once.
    struct Update
    {
        RowPlan<Row> rows;
        qint64 takenAtMs = 0;
    };
    // Takes the snapshot's nodes; the uptime is measured against its taken_at.
    Update prepare(const api::ClusterSnapshot &snapshot) const;
    RowChanges commit(Update &&update);
    RowChanges apply(const api::ClusterSnapshot &snapshot) { return commit(prepare(snapshot)); }

    int rowOf(const QString &nodeId) const; // -1 when unknown
    QString nodeId(int row) const;
    QStringList nodeIds() const; // sorted
    const api::NodeSnapshot *node(const QString &nodeId) const; // valid until the next apply()

    // Copies (cheap, implicitly shared); empty for an unknown node.
    MetricSeries loadSeries(const QString &nodeId) const;
    MetricSeries messagesInSeries(const QString &nodeId) const;
    MetricSeries messagesOutSeries(const QString &nodeId) const;
    qint64 seriesWindowMs() const { return m_seriesWindowMs; }

    // "2 h 13 min": the uptime as the table shows it.
    static QString formatUptime(qint64 ms);

Q_SIGNALS:
    // A node's load or message-rate series gained samples (emitted after the rows changed).
    void seriesChanged(const QString &nodeId);

private:
    struct Series
    {
        MetricSeries load;
        MetricSeries messagesIn;
        MetricSeries messagesOut;
    };
    static quint64 changedColumns(const Row &before, const Row &after);
    QVariant display(const Row &row, int column) const;
    QVariant sortValue(const Row &row, int column) const;

    KeyedRows<Row> m_rows;
    QHash<QString, Series> m_series;
    qint64 m_seriesWindowMs;
};

} // namespace rt::dashboard
