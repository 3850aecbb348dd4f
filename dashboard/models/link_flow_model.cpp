#include "dashboard/models/link_flow_model.h"

#include <tuple>

namespace rt::dashboard {

namespace {

auto keyOf(const api::LinkFlow &link)
{
    return std::tie(link.from, link.to);
}

} // namespace

LinkFlowModel::LinkFlowModel(QObject *parent) : KeyedTableModel(parent) { }

int LinkFlowModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int LinkFlowModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LinkFlowModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const api::LinkFlow &link = m_rows[qsizetype(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case FromColumn:
            return link.from;
        case ToColumn:
            return link.to;
        case MessagesColumn:
            return formatRate(link.messagesPerSecond);
        case BytesColumn:
            return formatRate(link.bytesPerSecond);
        default:
            return {};
        }
    case Qt::TextAlignmentRole:
        return index.column() >= MessagesColumn ? numberAlignment() : QVariant();
    case KeyRole:
        return QStringLiteral("%1 → %2").arg(link.from, link.to);
    case SortRole:
        switch (index.column()) {
        case MessagesColumn:
            return link.messagesPerSecond;
        case BytesColumn:
            return link.bytesPerSecond;
        default:
            return data(index, Qt::DisplayRole);
        }
    case FromRole:
        return link.from;
    case ToRole:
        return link.to;
    case MessagesPerSecondRole:
        return link.messagesPerSecond;
    case BytesPerSecondRole:
        return link.bytesPerSecond;
    default:
        return {};
    }
}

QVariant LinkFlowModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return KeyedTableModel::headerData(section, orientation, role);
    }
    switch (section) {
    case FromColumn:
        return tr("From");
    case ToColumn:
        return tr("To");
    case MessagesColumn:
        return tr("Messages/s");
    case BytesColumn:
        return tr("Bytes/s");
    default:
        return {};
    }
}

QHash<int, QByteArray> LinkFlowModel::roleNames() const
{
    QHash<int, QByteArray> names = KeyedTableModel::roleNames();
    names.insert(FromRole, QByteArrayLiteral("from"));
    names.insert(ToRole, QByteArrayLiteral("to"));
    names.insert(MessagesPerSecondRole, QByteArrayLiteral("messagesPerSecond"));
    names.insert(BytesPerSecondRole, QByteArrayLiteral("bytesPerSecond"));
    return names;
}

quint64 LinkFlowModel::changedColumns(const api::LinkFlow &before, const api::LinkFlow &after)
{
    return columnIf(before.messagesPerSecond != after.messagesPerSecond, MessagesColumn)
            | columnIf(before.bytesPerSecond != after.bytesPerSecond, BytesColumn);
}

std::optional<bool> LinkFlowModel::rowLessThan(int left, int right, int column) const
{
    const api::LinkFlow &a = m_rows[left];
    const api::LinkFlow &b = m_rows[right];
    switch (column) {
    case FromColumn:
        return a.from < b.from;
    case ToColumn:
        return a.to < b.to;
    case MessagesColumn:
        return a.messagesPerSecond < b.messagesPerSecond;
    case BytesColumn:
        return a.bytesPerSecond < b.bytesPerSecond;
    default:
        return std::nullopt;
    }
}

LinkFlowModel::Update LinkFlowModel::prepare(const api::ClusterSnapshot &snapshot) const
{
    Update update;
    for (const api::LinkFlow &link : snapshot.links) {
        update.maxMessagesPerSecond = std::max(update.maxMessagesPerSecond, link.messagesPerSecond);
    }
    update.rows = planRows(
            m_rows, std::vector<api::LinkFlow>(snapshot.links.cbegin(), snapshot.links.cend()),
            &keyOf, &LinkFlowModel::changedColumns);
    return update;
}

RowChanges LinkFlowModel::commit(Update &&update)
{
    m_maxMessagesPerSecond = update.maxMessagesPerSecond;
    return applyPlan(m_rows, std::move(update.rows));
}

int LinkFlowModel::rowOf(const QString &from, const QString &to) const
{
    const auto key = std::tie(from, to);
    const auto it = std::lower_bound(
            m_rows.begin(), m_rows.end(), key,
            [](const api::LinkFlow &row, const auto &wanted) { return keyOf(row) < wanted; });
    return it != m_rows.end() && keyOf(*it) == key ? int(it - m_rows.begin()) : -1;
}

const api::LinkFlow *LinkFlowModel::link(int row) const
{
    return row >= 0 && row < m_rows.size() ? &m_rows[qsizetype(row)] : nullptr;
}

} // namespace rt::dashboard
