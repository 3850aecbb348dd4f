#include "dashboard/models/keyed_table_model.h"

#include <QLocale>

#include <bit>

namespace rt::dashboard {

QHash<int, QByteArray> KeyedTableModel::roleNames() const
{
    QHash<int, QByteArray> names = QAbstractTableModel::roleNames();
    names.insert(KeyRole, QByteArrayLiteral("key"));
    names.insert(SortRole, QByteArrayLiteral("sort"));
    return names;
}

std::optional<bool> KeyedTableModel::rowLessThan(int /*left*/, int /*right*/, int /*column*/) const
{
    return std::nullopt;
}

QString KeyedTableModel::formatRate(double perSecond)
{
    return QLocale().toString(perSecond, 'f', 1);
}

QVariant KeyedTableModel::numberAlignment()
{
    return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
}

void KeyedTableModel::emitChanged(qsizetype first, qsizetype last, quint64 columns)
{
    // A sorting proxy re-checks every row a dataChanged names: a few runs are signalled one by
    // one, many (applyRows) as one span.
    const int lowColumn = std::countr_zero(columns);
    const int highColumn = 63 - std::countl_zero(columns);
    Q_EMIT dataChanged(index(int(first), lowColumn), index(int(last), highColumn));
}

KeyedSortProxy::KeyedSortProxy(QObject *parent) : QSortFilterProxyModel(parent)
{
    setSortRole(KeyedTableModel::SortRole);
}

bool KeyedSortProxy::lessThan(const QModelIndex &left, const QModelIndex &right) const
{
    // Strings compare as a proxy compares them by default (case-sensitive, not by locale).
    if (sortRole() == KeyedTableModel::SortRole && sortCaseSensitivity() == Qt::CaseSensitive
        && !isSortLocaleAware()) {
        QModelIndex sourceLeft = left;
        QModelIndex sourceRight = right;
        const QAbstractItemModel *model = sourceModel();
        while (const auto *proxy = qobject_cast<const QAbstractProxyModel *>(model)) {
            sourceLeft = proxy->mapToSource(sourceLeft);
            sourceRight = proxy->mapToSource(sourceRight);
            model = proxy->sourceModel();
        }
        if (const auto *keyed = qobject_cast<const KeyedTableModel *>(model)) {
            if (const std::optional<bool> less = keyed->rowLessThan(
                        sourceLeft.row(), sourceRight.row(), sourceLeft.column())) {
                return *less;
            }
        }
    }
    return QSortFilterProxyModel::lessThan(left, right);
}

} // namespace rt::dashboard
