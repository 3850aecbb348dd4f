#pragma once

#include "dashboard/models/keyed_table_model.h"

#include <QSet>
#include <QString>

#include <utility>

namespace rt::dashboard {

class TenantFlowModel;

// What the Message flow page's tenant table shows of TenantFlowModel: while nothing is searched,
// only the `limit` busiest (tenant, node) flows (messages in + out per second, ties by key);
// with a search text, every flow whose tenant contains it. At 20,000 flows a sorted table over
// all of them would re-sort on every snapshot for rows nobody scrolls to; over the busiest few
// hundred it costs next to nothing. The busiest set is recomputed by refreshBusiest() (call it
// after each snapshot); rows the model adds meanwhile wait for it. Source: a TenantFlowModel.
// Lives on the GUI thread.
class BusiestFlowsFilter : public KeyedSortProxy
{
    Q_OBJECT
public:
    explicit BusiestFlowsFilter(TenantFlowModel *flows, qsizetype limit, QObject *parent = nullptr);

    qsizetype limit() const { return m_limit; }
    // Case-insensitive; empty: the busiest only.
    void setSearch(const QString &text);
    QString search() const { return m_search; }
    void refreshBusiest();
    // Flows in the model, and whether some are left out (no search and more than `limit`).
    qsizetype totalFlows() const;
    bool isTrimmed() const { return m_search.isEmpty() && totalFlows() > m_limit; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    TenantFlowModel *m_flows; // the source, not owned
    qsizetype m_limit;
    QString m_search;
    QSet<std::pair<QString, QString>> m_busiest; // (tenant, node)
};

} // namespace rt::dashboard
