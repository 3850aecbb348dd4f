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
    // Only adjacent rows share a signal: a sorting proxy re-sorts every row a dataChanged names,
    // so naming unchanged rows in a gap would cost it more than one more signal.
    const int lowColumn = std::countr_zero(columns);
    const int highColumn = 63 - std::countl_zero(columns);
    Q_EMIT dataChanged(index(int(first), lowColumn), index(int(last), highColumn));
}

} // namespace rt::dashboard
