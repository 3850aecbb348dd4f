#pragma once

#include "server/cdc/change.h"
#include "server/subscriptions/matcher.h"

#include <QList>

#include <vector>

namespace rt::cdc {

// One row of a change as the subscription filters see it (spec §6.5 step 5): the columns of its
// relation with their text values. Built once per change, asked once per binding.
class RowFilterView
{
public:
    // `tuple` is the row to filter on; `fallback` supplies unchanged TOAST values (the old row).
    RowFilterView(const RelationInfo &relation, const QList<TupleValue> &tuple,
                  const QList<TupleValue> &fallback);

    bool passes(const QList<subscriptions::Filter> &filters) const;

private:
    const subscriptions::ColumnValue *find(QStringView name) const;

    std::vector<QString> m_names;
    std::vector<subscriptions::ColumnValue> m_values;
    std::vector<bool> m_present; // false: not in the tuple (e.g. a key tuple's other columns)
};

} // namespace rt::cdc
