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

} // namespace rt::dashboard
