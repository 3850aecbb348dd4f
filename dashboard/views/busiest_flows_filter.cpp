#include "dashboard/views/busiest_flows_filter.h"

#include "dashboard/models/tenant_flow_model.h"

#include <algorithm>
#include <vector>

namespace rt::dashboard {

BusiestFlowsFilter::BusiestFlowsFilter(TenantFlowModel *flows, qsizetype limit, QObject *parent)
    : KeyedSortProxy(parent),
      m_flows(flows),
      m_limit(std::max<qsizetype>(1, limit))
{
    setSourceModel(flows);
    refreshBusiest();
}

void BusiestFlowsFilter::setSearch(const QString &text)
{
    const QString search = text.trimmed();
    if (search == m_search) {
        return;
    }
    m_search = search;
    invalidateRowsFilter();
}

qsizetype BusiestFlowsFilter::totalFlows() const
{
    return m_flows->rowCount();
}

void BusiestFlowsFilter::refreshBusiest()
{
    const int rows = m_flows->rowCount();
    std::vector<std::pair<double, int>> rates; // (messages/s in + out, row)
    rates.reserve(std::size_t(rows));
    for (int row = 0; row < rows; ++row) {
        const api::TenantFlow *flow = m_flows->flow(row);
        rates.emplace_back(flow->messagesInPerSecond + flow->messagesOutPerSecond, row);
    }
    // Rows are in key order, so the lower row wins a tie: the same flows stay in from snapshot
    // to snapshot while the rates are equal.
    const auto busier = [](const auto &a, const auto &b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    };
    const auto kept = std::min(rates.size(), std::size_t(m_limit));
    std::nth_element(rates.begin(), rates.begin() + qsizetype(kept), rates.end(), busier);
    QSet<std::pair<QString, QString>> busiest;
    busiest.reserve(qsizetype(kept));
    for (std::size_t i = 0; i < kept; ++i) {
        const api::TenantFlow *flow = m_flows->flow(rates[i].second);
        busiest.insert({ flow->tenant, flow->node });
    }
    if (busiest == m_busiest) {
        return;
    }
    m_busiest = std::move(busiest);
    if (m_search.isEmpty()) {
        invalidateRowsFilter();
    }
}

bool BusiestFlowsFilter::filterAcceptsRow(int sourceRow, const QModelIndex &) const
{
    const api::TenantFlow *flow = m_flows->flow(sourceRow);
    if (flow == nullptr) {
        return false;
    }
    if (!m_search.isEmpty()) {
        return flow->tenant.contains(m_search, Qt::CaseInsensitive);
    }
    return m_busiest.contains({ flow->tenant, flow->node });
}

} // namespace rt::dashboard
