#include "dashboard/models/nodes_model.h"

#include <QLocale>

namespace rt::dashboard {

NodesModel::NodesModel(QObject *parent, qint64 seriesWindowMs)
    : KeyedTableModel(parent),
      m_seriesWindowMs(seriesWindowMs)
{ }

int NodesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int NodesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString NodesModel::formatUptime(qint64 ms)
{
    const qint64 seconds = std::max<qint64>(ms, 0) / 1000;
    const qint64 minutes = seconds / 60;
    const qint64 hours = minutes / 60;
    const qint64 days = hours / 24;
    if (days > 0) {
        return tr("%1 d %2 h").arg(days).arg(hours % 24);
    }
    if (hours > 0) {
        return tr("%1 h %2 min").arg(hours).arg(minutes % 60);
    }
    if (minutes > 0) {
        return tr("%1 min %2 s").arg(minutes).arg(seconds % 60);
    }
    return tr("%1 s").arg(seconds);
}

QVariant NodesModel::display(const Row &row, int column) const
{
    const api::NodeSnapshot &node = row.node;
    switch (column) {
    case IdColumn:
        return node.id;
    case RegionColumn:
        return node.region;
    case ClientAddressColumn:
        return node.clientAddress;
    case UptimeColumn:
        return formatUptime(row.uptimeMs);
    case LoadColumn:
        return node.load ? QLocale().toString(*node.load, 'f', 2) : QStringLiteral("—");
    case ConnectionsColumn:
        return node.connections;
    case ChannelsColumn:
        return node.channels;
    case MessagesInColumn:
        return formatRate(node.messagesInPerSecond);
    case MessagesOutColumn:
        return formatRate(node.messagesOutPerSecond);
    case AvailableColumn:
        return node.available ? tr("Yes") : tr("No");
    default:
        return {};
    }
}

QVariant NodesModel::sortValue(const Row &row, int column) const
{
    const api::NodeSnapshot &node = row.node;
    switch (column) {
    case UptimeColumn:
        return row.uptimeMs;
    case LoadColumn:
        return node.load ? QVariant(*node.load) : QVariant(-1.0); // no data sorts first
    case MessagesInColumn:
        return node.messagesInPerSecond;
    case MessagesOutColumn:
        return node.messagesOutPerSecond;
    case AvailableColumn:
        return node.available;
    default:
        return display(row, column);
    }
}

QVariant NodesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Row &row = m_rows[qsizetype(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return display(row, index.column());
    case Qt::ToolTipRole:
        if (index.column() == LoadColumn && !row.node.load) {
            return tr("Not enough data yet");
        }
        if (index.column() == ClientAddressColumn) {
            return tr("Clients: %1, node links: %2")
                    .arg(row.node.clientAddress, row.node.linkAddress);
        }
        if (index.column() == AvailableColumn) {
            return row.node.available ? tr("Reaches the cluster backend")
                                      : tr("Does not reach the cluster backend");
        }
        return {};
    case Qt::TextAlignmentRole:
        return index.column() >= UptimeColumn && index.column() <= MessagesOutColumn
                ? numberAlignment()
                : QVariant();
    case KeyRole:
        return row.node.id;
    case SortRole:
        return sortValue(row, index.column());
    case LoadRole:
        return row.node.load ? QVariant(*row.node.load) : QVariant();
    case AvailableRole:
        return row.node.available;
    case RegionRole:
        return row.node.region;
    case UptimeMsRole:
        return row.uptimeMs;
    default:
        return {};
    }
}

QVariant NodesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return KeyedTableModel::headerData(section, orientation, role);
    }
    switch (section) {
    case IdColumn:
        return tr("Node");
    case RegionColumn:
        return tr("Region");
    case ClientAddressColumn:
        return tr("Client address");
    case UptimeColumn:
        return tr("Uptime");
    case LoadColumn:
        return tr("Load");
    case ConnectionsColumn:
        return tr("Connections");
    case ChannelsColumn:
        return tr("Channels");
    case MessagesInColumn:
        return tr("Messages in/s");
    case MessagesOutColumn:
        return tr("Messages out/s");
    case AvailableColumn:
        return tr("Available");
    default:
        return {};
    }
}

QHash<int, QByteArray> NodesModel::roleNames() const
{
    QHash<int, QByteArray> names = KeyedTableModel::roleNames();
    names.insert(LoadRole, QByteArrayLiteral("load"));
    names.insert(AvailableRole, QByteArrayLiteral("available"));
    names.insert(RegionRole, QByteArrayLiteral("region"));
    names.insert(UptimeMsRole, QByteArrayLiteral("uptimeMs"));
    return names;
}

quint64 NodesModel::changedColumns(const Row &before, const Row &after)
{
    const api::NodeSnapshot &a = before.node;
    const api::NodeSnapshot &b = after.node;
    // The load history feeds the series, not a cell, and is left out on purpose.
    return columnIf(a.region != b.region, RegionColumn)
            | columnIf(a.clientAddress != b.clientAddress || a.linkAddress != b.linkAddress,
                       ClientAddressColumn)
            | columnIf(before.uptimeMs != after.uptimeMs || a.startedAtMs != b.startedAtMs,
                       UptimeColumn)
            | columnIf(a.load != b.load, LoadColumn)
            | columnIf(a.connections != b.connections, ConnectionsColumn)
            | columnIf(a.channels != b.channels, ChannelsColumn)
            | columnIf(a.messagesInPerSecond != b.messagesInPerSecond, MessagesInColumn)
            | columnIf(a.messagesOutPerSecond != b.messagesOutPerSecond, MessagesOutColumn)
            | columnIf(a.available != b.available, AvailableColumn);
}

NodesModel::Update NodesModel::prepare(const api::ClusterSnapshot &snapshot) const
{
    std::vector<Row> next;
    next.reserve(std::size_t(snapshot.nodes.size()));
    for (const api::NodeSnapshot &node : snapshot.nodes) {
        next.push_back(Row{ node, snapshot.takenAtMs - node.startedAtMs });
    }
    return Update{ planRows(
                           m_rows, std::move(next),
                           [](const Row &row) -> const QString & { return row.node.id; },
                           &NodesModel::changedColumns),
                   snapshot.takenAtMs };
}

RowChanges NodesModel::commit(Update &&update)
{
    const qint64 takenAtMs = update.takenAtMs;
    const RowChanges changes = applyPlan(m_rows, std::move(update.rows));

    // The series follow the rows: departed nodes lose theirs, the others gain today's samples.
    for (auto it = m_series.begin(); it != m_series.end();) {
        if (rowOf(it.key()) < 0) {
            it = m_series.erase(it);
        } else {
            ++it;
        }
    }
    QStringList grown;
    for (const Row &row : m_rows) {
        const api::NodeSnapshot &node = row.node;
        auto it = m_series.find(node.id);
        if (it == m_series.end()) {
            const MetricSeries empty(m_seriesWindowMs);
            it = m_series.insert(node.id, Series{ empty, empty, empty });
        }
        bool hasGrown = false;
        // The history first (it fills the window on the first snapshot), then the current
        // load; the series ignores what it already has.
        for (const api::LoadSample &sample : node.loadHistory) {
            hasGrown |= it->load.append(sample.atMs, sample.load);
        }
        if (node.load) {
            hasGrown |= it->load.append(takenAtMs, *node.load);
        }
        hasGrown |= it->messagesIn.append(takenAtMs, node.messagesInPerSecond);
        hasGrown |= it->messagesOut.append(takenAtMs, node.messagesOutPerSecond);
        if (hasGrown) {
            grown.append(node.id);
        }
    }
    for (const QString &id : std::as_const(grown)) {
        Q_EMIT seriesChanged(id);
    }
    return changes;
}

int NodesModel::rowOf(const QString &nodeId) const
{
    const auto it =
            std::lower_bound(m_rows.begin(), m_rows.end(), nodeId,
                             [](const Row &row, const QString &id) { return row.node.id < id; });
    return it != m_rows.end() && it->node.id == nodeId ? int(it - m_rows.begin()) : -1;
}

QString NodesModel::nodeId(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows[qsizetype(row)].node.id : QString();
}

QStringList NodesModel::nodeIds() const
{
    QStringList ids;
    ids.reserve(m_rows.size());
    for (const Row &row : m_rows) {
        ids.append(row.node.id);
    }
    return ids;
}

const api::NodeSnapshot *NodesModel::node(const QString &nodeId) const
{
    const int row = rowOf(nodeId);
    return row < 0 ? nullptr : &m_rows[qsizetype(row)].node;
}

MetricSeries NodesModel::loadSeries(const QString &nodeId) const
{
    const auto it = m_series.constFind(nodeId);
    return it == m_series.cend() ? MetricSeries(m_seriesWindowMs) : it->load;
}

MetricSeries NodesModel::messagesInSeries(const QString &nodeId) const
{
    const auto it = m_series.constFind(nodeId);
    return it == m_series.cend() ? MetricSeries(m_seriesWindowMs) : it->messagesIn;
}

MetricSeries NodesModel::messagesOutSeries(const QString &nodeId) const
{
    const auto it = m_series.constFind(nodeId);
    return it == m_series.cend() ? MetricSeries(m_seriesWindowMs) : it->messagesOut;
}

} // namespace rt::dashboard
