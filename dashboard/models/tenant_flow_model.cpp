#include "dashboard/models/tenant_flow_model.h"

#include <tuple>

namespace rt::dashboard {

namespace {

auto keyOf(const api::TenantFlow &flow)
{
    return std::tie(flow.tenant, flow.node);
}

} // namespace

TenantFlowModel::TenantFlowModel(QObject *parent, qint64 seriesWindowMs)
    : KeyedTableModel(parent),
      m_total(seriesWindowMs),
      m_seriesWindowMs(seriesWindowMs)
{ }

int TenantFlowModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int TenantFlowModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TenantFlowModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const api::TenantFlow &flow = m_rows[qsizetype(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TenantColumn:
            return flow.tenant;
        case NodeColumn:
            return flow.node;
        case MessagesInColumn:
            return formatRate(flow.messagesInPerSecond);
        case MessagesOutColumn:
            return formatRate(flow.messagesOutPerSecond);
        default:
            return {};
        }
    case Qt::TextAlignmentRole:
        return index.column() >= MessagesInColumn ? numberAlignment() : QVariant();
    case KeyRole:
        return QStringLiteral("%1 @ %2").arg(flow.tenant, flow.node);
    case SortRole:
        switch (index.column()) {
        case MessagesInColumn:
            return flow.messagesInPerSecond;
        case MessagesOutColumn:
            return flow.messagesOutPerSecond;
        default:
            return data(index, Qt::DisplayRole);
        }
    case TenantRole:
        return flow.tenant;
    case NodeRole:
        return flow.node;
    case MessagesInPerSecondRole:
        return flow.messagesInPerSecond;
    case MessagesOutPerSecondRole:
        return flow.messagesOutPerSecond;
    default:
        return {};
    }
}

QVariant TenantFlowModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return KeyedTableModel::headerData(section, orientation, role);
    }
    switch (section) {
    case TenantColumn:
        return tr("Tenant");
    case NodeColumn:
        return tr("Node");
    case MessagesInColumn:
        return tr("Messages in/s");
    case MessagesOutColumn:
        return tr("Messages out/s");
    default:
        return {};
    }
}

QHash<int, QByteArray> TenantFlowModel::roleNames() const
{
    QHash<int, QByteArray> names = KeyedTableModel::roleNames();
    names.insert(TenantRole, QByteArrayLiteral("tenant"));
    names.insert(NodeRole, QByteArrayLiteral("node"));
    names.insert(MessagesInPerSecondRole, QByteArrayLiteral("messagesInPerSecond"));
    names.insert(MessagesOutPerSecondRole, QByteArrayLiteral("messagesOutPerSecond"));
    return names;
}

quint64 TenantFlowModel::changedColumns(const api::TenantFlow &before, const api::TenantFlow &after)
{
    return columnIf(before.messagesInPerSecond != after.messagesInPerSecond, MessagesInColumn)
            | columnIf(before.messagesOutPerSecond != after.messagesOutPerSecond,
                       MessagesOutColumn);
}

std::optional<bool> TenantFlowModel::rowLessThan(int left, int right, int column) const
{
    const api::TenantFlow &a = m_rows[left];
    const api::TenantFlow &b = m_rows[right];
    switch (column) {
    case TenantColumn:
        return a.tenant < b.tenant;
    case NodeColumn:
        return a.node < b.node;
    case MessagesInColumn:
        return a.messagesInPerSecond < b.messagesInPerSecond;
    case MessagesOutColumn:
        return a.messagesOutPerSecond < b.messagesOutPerSecond;
    default:
        return std::nullopt;
    }
}

TenantFlowModel::Update TenantFlowModel::prepare(const api::ClusterSnapshot &snapshot) const
{
    Update update;
    update.takenAtMs = snapshot.takenAtMs;
    update.rows = planRows(m_rows,
                           std::vector<api::TenantFlow>(snapshot.tenantFlows.cbegin(),
                                                        snapshot.tenantFlows.cend()),
                           &keyOf, &TenantFlowModel::changedColumns);
    // The next rows are sorted by tenant: one sum per tenant, for one hash lookup each.
    // Changed rows still hold their previous values in `rows`; their new ones are in `updated`
    // (in row order).
    const RowPlan<api::TenantFlow> &plan = update.rows;
    std::size_t nextChanged = 0;
    const auto rateOf = [&plan, &nextChanged](std::size_t row) {
        const api::TenantFlow *flow = &plan.rows[row];
        if (nextChanged < plan.changed.size()
            && std::size_t(plan.changed[nextChanged].first) == row) {
            flow = &plan.updated[nextChanged++];
        }
        return flow->messagesInPerSecond + flow->messagesOutPerSecond;
    };
    for (std::size_t i = 0; i < plan.rows.size();) {
        const QString &tenantName = plan.rows[i].tenant;
        double sum = 0;
        for (; i < plan.rows.size() && plan.rows[i].tenant == tenantName; ++i) {
            sum += rateOf(i);
        }
        update.tenantRates.emplace_back(tenantName, sum);
        update.totalRate += sum;
    }
    return update;
}

RowChanges TenantFlowModel::commit(Update &&update)
{
    const RowChanges changes = applyPlan(m_rows, std::move(update.rows));
    updateSeries(update);
    return changes;
}

void TenantFlowModel::updateSeries(const Update &update)
{
    const qint64 atMs = update.takenAtMs;
    for (TenantRate &rate : m_rates) {
        rate.current = 0;
    }
    m_rates.reserve(std::max(m_rates.size(), qsizetype(update.tenantRates.size())));
    for (const auto &[tenantName, sum] : update.tenantRates) {
        auto it = m_rates.find(tenantName);
        if (it == m_rates.end()) {
            it = m_rates.insert(tenantName, TenantRate{ MetricSeries(m_seriesWindowMs), 0, 0 });
        }
        it->current = sum;
    }
    const double total = update.totalRate;
    if (const auto last = m_total.last(); last && atMs <= last->atMs) {
        return; // an older or repeated snapshot (e.g. from a node whose clock lags): no samples
    }
    for (auto it = m_rates.begin(); it != m_rates.end();) {
        it->series.append(atMs, it->current);
        if (it->current != 0) {
            it->lastNonZeroAtMs = atMs;
        } else if (it->lastNonZeroAtMs < atMs - m_seriesWindowMs) {
            it = m_rates.erase(it); // only zeros left in its window
            continue;
        }
        ++it;
    }
    m_total.append(atMs, total);
    Q_EMIT ratesChanged();
}

int TenantFlowModel::rowOf(const QString &tenant, const QString &node) const
{
    const auto key = std::tie(tenant, node);
    const auto it = std::lower_bound(
            m_rows.begin(), m_rows.end(), key,
            [](const api::TenantFlow &row, const auto &wanted) { return keyOf(row) < wanted; });
    return it != m_rows.end() && keyOf(*it) == key ? int(it - m_rows.begin()) : -1;
}

const api::TenantFlow *TenantFlowModel::flow(int row) const
{
    return row >= 0 && row < m_rows.size() ? &m_rows[qsizetype(row)] : nullptr;
}

MetricSeries TenantFlowModel::tenantRateSeries(const QString &tenant) const
{
    const auto it = m_rates.constFind(tenant);
    return it == m_rates.cend() ? MetricSeries(m_seriesWindowMs) : it->series;
}

double TenantFlowModel::tenantRate(const QString &tenant) const
{
    const auto it = m_rates.constFind(tenant);
    return it == m_rates.cend() ? 0 : it->current;
}

QStringList TenantFlowModel::tenantsWithSeries() const
{
    QStringList tenants = m_rates.keys();
    tenants.sort();
    return tenants;
}

QStringList TenantFlowModel::busiestTenants(qsizetype count) const
{
    std::vector<std::pair<double, QString>> rates;
    rates.reserve(std::size_t(m_rates.size()));
    for (auto it = m_rates.cbegin(); it != m_rates.cend(); ++it) {
        rates.emplace_back(it->current, it.key());
    }
    const auto busier = [](const auto &a, const auto &b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    };
    const auto wanted =
            std::min<std::size_t>(rates.size(), std::size_t(std::max<qsizetype>(count, 0)));
    std::partial_sort(rates.begin(), rates.begin() + qsizetype(wanted), rates.end(), busier);
    QStringList tenants;
    for (std::size_t i = 0; i < wanted; ++i) {
        tenants.append(rates[i].second);
    }
    return tenants;
}

} // namespace rt::dashboard
