#include "dashboard/models/config_model.h"

#include <QDateTime>
#include <QLocale>

#include <limits>

namespace rt::dashboard {

namespace {

// When a temporary override ends, as the user's locale writes it.
QString endText(qint64 expiresAtMs, QLocale::FormatType format)
{
    return QLocale().toString(QDateTime::fromMSecsSinceEpoch(expiresAtMs), format);
}

} // namespace

ConfigModel::ConfigModel(QObject *parent) : KeyedTableModel(parent) { }

int ConfigModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ConfigModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ConfigModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const api::ConfigValue &entry = m_rows[qsizetype(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case KeyColumn:
            return entry.key;
        case ValueColumn:
            return QString::fromUtf8(entry.value);
        case RevisionColumn:
            return entry.modRevision;
        case TemporaryColumn:
            if (!entry.temporary) {
                return tr("No");
            }
            return entry.expiresAtMs
                    ? tr("Until %1").arg(endText(*entry.expiresAtMs, QLocale::ShortFormat))
                    : tr("Yes");
        default:
            return {};
        }
    case Qt::ToolTipRole:
        if (index.column() == TemporaryColumn && entry.temporary) {
            return entry.expiresAtMs
                    ? tr("A temporary override: its lease ends at %1")
                              .arg(endText(*entry.expiresAtMs, QLocale::LongFormat))
                    : tr("A temporary override: it expires with its lease");
        }
        return {};
    case Qt::TextAlignmentRole:
        return index.column() == RevisionColumn ? numberAlignment() : QVariant();
    case KeyRole:
        return entry.key;
    case SortRole:
        switch (index.column()) {
        case RevisionColumn:
            return entry.modRevision;
        case TemporaryColumn:
            // Permanent first, then temporary ones by when they end (unknown ends last).
            return !entry.temporary
                    ? qint64(0)
                    : entry.expiresAtMs.value_or(std::numeric_limits<qint64>::max());
        default:
            return data(index, Qt::DisplayRole);
        }
    case ValueRole:
        return entry.value;
    case RevisionRole:
        return entry.modRevision;
    case TemporaryRole:
        return entry.temporary;
    case ExpiresAtRole:
        return entry.temporary && entry.expiresAtMs
                ? QVariant(QDateTime::fromMSecsSinceEpoch(*entry.expiresAtMs))
                : QVariant();
    default:
        return {};
    }
}

QVariant ConfigModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return KeyedTableModel::headerData(section, orientation, role);
    }
    switch (section) {
    case KeyColumn:
        return tr("Key");
    case ValueColumn:
        return tr("Value");
    case RevisionColumn:
        return tr("Revision");
    case TemporaryColumn:
        return tr("Temporary");
    default:
        return {};
    }
}

QHash<int, QByteArray> ConfigModel::roleNames() const
{
    QHash<int, QByteArray> names = KeyedTableModel::roleNames();
    names.insert(ValueRole, QByteArrayLiteral("value"));
    names.insert(RevisionRole, QByteArrayLiteral("revision"));
    names.insert(TemporaryRole, QByteArrayLiteral("temporary"));
    names.insert(ExpiresAtRole, QByteArrayLiteral("expiresAt"));
    return names;
}

quint64 ConfigModel::changedColumns(const api::ConfigValue &before, const api::ConfigValue &after)
{
    return columnIf(before.value != after.value, ValueColumn)
            | columnIf(before.modRevision != after.modRevision, RevisionColumn)
            | columnIf(before.temporary != after.temporary
                               || before.expiresAtMs != after.expiresAtMs,
                       TemporaryColumn);
}

ConfigModel::Update ConfigModel::prepare(const api::ClusterSnapshot &snapshot) const
{
    return Update{
        planRows(
                m_rows,
                std::vector<api::ConfigValue>(snapshot.config.cbegin(), snapshot.config.cend()),
                [](const api::ConfigValue &entry) -> const QString & { return entry.key; },
                &ConfigModel::changedColumns),
        snapshot.configRevision
    };
}

RowChanges ConfigModel::commit(Update &&update)
{
    const RowChanges changes = applyPlan(m_rows, std::move(update.rows));
    if (update.revision != m_revision) {
        m_revision = update.revision;
        Q_EMIT revisionChanged(m_revision);
    }
    return changes;
}

int ConfigModel::rowOf(const QString &key) const
{
    const auto it = std::lower_bound(
            m_rows.begin(), m_rows.end(), key,
            [](const api::ConfigValue &row, const QString &wanted) { return row.key < wanted; });
    return it != m_rows.end() && it->key == key ? int(it - m_rows.begin()) : -1;
}

const api::ConfigValue *ConfigModel::entry(const QString &key) const
{
    const int row = rowOf(key);
    return row < 0 ? nullptr : &m_rows[qsizetype(row)];
}

} // namespace rt::dashboard
