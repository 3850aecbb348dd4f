#include "server/cdc/row_filter.h"

namespace rt::cdc {

RowFilterView::RowFilterView(const RelationInfo &relation, const QList<TupleValue> &tuple,
                             const QList<TupleValue> &fallback)
{
    const qsizetype count = relation.columns.size();
    m_names.reserve(count);
    m_values.reserve(count);
    m_present.reserve(count);
    for (qsizetype i = 0; i < count; ++i) {
        const ColumnInfo &column = relation.columns[i];
        m_names.push_back(QString::fromUtf8(column.name));
        subscriptions::ColumnValue value{ column.typeName, std::nullopt };
        bool present = i < tuple.size();
        if (present) {
            const TupleValue *source = &tuple[i];
            if (source->kind == TupleValue::Kind::UnchangedToast) {
                source = i < fallback.size() ? &fallback[i] : nullptr;
            }
            if (source == nullptr || source->kind == TupleValue::Kind::UnchangedToast) {
                present = false;
            } else if (source->kind == TupleValue::Kind::Text) {
                value.text = source->text;
            }
        }
        m_values.push_back(std::move(value));
        m_present.push_back(present);
    }
}

const subscriptions::ColumnValue *RowFilterView::find(QStringView name) const
{
    for (std::size_t i = 0; i < m_names.size(); ++i) {
        if (m_present[i] && m_names[i] == name) {
            return &m_values[i];
        }
    }
    return nullptr;
}

bool RowFilterView::passes(const QList<subscriptions::Filter> &filters) const
{
    if (filters.isEmpty()) {
        return true;
    }
    const auto lookup = [this](QStringView name) { return find(name); };
    return subscriptions::visibleThroughFilters(filters, subscriptions::RowView(lookup));
}

} // namespace rt::cdc
