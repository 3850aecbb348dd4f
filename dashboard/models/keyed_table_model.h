#pragma once

#include <QAbstractTableModel>
#include <QThread>

#include <algorithm>
#include <compare>
#include <iterator>
#include <vector>

namespace rt::dashboard {

// What one incremental update did to a model's rows.
struct RowChanges
{
    qsizetype inserted = 0;
    qsizetype removed = 0;
    qsizetype changed = 0;
    qsizetype dataChangedSignals = 0; // ranges emitted for `changed` rows

    bool isEmpty() const { return inserted == 0 && removed == 0 && changed == 0; }
};

// The rows of a KeyedTableModel, sorted by key. Outside KeyedTableModel::applyRows() they are
// one vector; during it, what the views see is the rows already in their new place
// followed by the rest of the previous rows, so that every insert and removal signal costs only
// the rows it names, not a shift of all the rows after it. Index with [] at any time.
template <typename Row>
class KeyedRows
{
public:
    qsizetype size() const { return qsizetype(m_head.size() + m_tail.size() - m_tailStart); }
    bool isEmpty() const { return size() == 0; }
    const Row &operator[](qsizetype i) const
    {
        const auto at = std::size_t(i);
        return at < m_head.size() ? m_head[at] : m_tail[m_tailStart + (at - m_head.size())];
    }
    // A random-access iterator over the rows as the views see them (valid in both states, so
    // std::lower_bound by key works even from a slot connected to a row signal).
    class const_iterator
    {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = Row;
        using difference_type = qsizetype;
        using pointer = const Row *;
        using reference = const Row &;

        const_iterator() = default;
        const_iterator(const KeyedRows *rows, qsizetype at) : m_rows(rows), m_at(at) { }
        reference operator*() const { return (*m_rows)[m_at]; }
        pointer operator->() const { return &(*m_rows)[m_at]; }
        reference operator[](difference_type n) const { return (*m_rows)[m_at + n]; }
        const_iterator &operator++() { return ++m_at, *this; }
        const_iterator operator++(int) { return const_iterator(m_rows, m_at++); }
        const_iterator &operator--() { return --m_at, *this; }
        const_iterator operator--(int) { return const_iterator(m_rows, m_at--); }
        const_iterator &operator+=(difference_type n) { return m_at += n, *this; }
        const_iterator &operator-=(difference_type n) { return m_at -= n, *this; }
        friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
        friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
        friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
        friend difference_type operator-(const const_iterator &a, const const_iterator &b)
        {
            return a.m_at - b.m_at;
        }
        friend bool operator==(const const_iterator &a, const const_iterator &b)
        {
            return a.m_at == b.m_at;
        }
        friend auto operator<=>(const const_iterator &a, const const_iterator &b)
        {
            return a.m_at <=> b.m_at;
        }

    private:
        const KeyedRows *m_rows = nullptr;
        qsizetype m_at = 0;
    };
    const_iterator begin() const { return const_iterator(this, 0); }
    const_iterator end() const { return const_iterator(this, size()); }

    // An empty vector to build the next rows in (its memory is reused from update to update).
    std::vector<Row> &scratch()
    {
        m_scratch.clear();
        return m_scratch;
    }

private:
    friend class KeyedTableModel;
    std::vector<Row> m_head; // the rows in their final place (all of them outside applyRows())
    std::vector<Row> m_tail; // during applyRows(): the previous rows, shown from m_tailStart on
    std::size_t m_tailStart = 0;
    // Buffers kept between updates: allocating (and page-faulting) a few MB per snapshot costs
    // more than the diff itself at 10,000s of rows.
    std::vector<Row> m_spare;
    std::vector<Row> m_scratch;
};

// A table whose rows are kept sorted by a unique key (node id, tenant, from->to, ...) and are
// replaced by a whole new list at once: applyRows() works out the difference and tells the views
// exactly that — beginRemoveRows/beginInsertRows for runs of departed and arrived keys, one
// dataChanged per run of adjacent changed rows (spanning the changed columns), or a single one
// from the first to the last changed row when the changes are scattered over more than
// MaxSeparateChangeRuns runs — and never resets
// the model, so selections, scroll positions and proxies survive every update. Lives on the GUI
// thread; rows change only there.
class KeyedTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;

    // Roles every keyed model answers: the row's key as text (e.g. "node-a", "node-a → node-b")
    // and a raw value per column for sorting (numbers as numbers).
    enum Role {
        KeyRole = Qt::UserRole,
        SortRole,
        FirstModelRole = Qt::UserRole + 16, // models number their own roles from here
    };

    QHash<int, QByteArray> roleNames() const override;

protected:
    // A sorting proxy answers every dataChanged with a layout change of its own (and its views
    // with a relayout): at 10,000s of rows with ~5% changing, a thousand single-row signals cost
    // a table view 100 ms, one signal over the whole span a few ms of re-checking rows.
    static constexpr std::size_t MaxSeparateChangeRuns = 16;
    // A rate as the tables show it: one decimal, in the current locale.
    static QString formatRate(double perSecond);
    // The alignment of numeric columns.
    static QVariant numberAlignment();
    // Bit `column` when `differs`: the pieces of a changedColumns() mask.
    static constexpr quint64 columnIf(bool differs, int column)
    {
        return differs ? quint64(1) << column : 0;
    }

    // Replaces `rows` (sorted by keyOf, unique) by `next` (any order; duplicates keep the first),
    // emitting the incremental signals in one pass over both lists. `keyOf(row)` returns
    // something ordered with < (e.g. std::tie of members); `changedColumns(old, next)` returns a
    // bit mask of the columns whose display differs (0: unchanged); a row whose hidden data
    // changed must report at least one column, or the update is dropped.
    // `next` is consumed (left empty); KeyedRows::scratch() is the vector to pass.
    template <typename Row, typename KeyOf, typename ChangedColumns>
    RowChanges applyRows(KeyedRows<Row> &rows, std::vector<Row> &next, KeyOf keyOf,
                         ChangedColumns changedColumns)
    {
        Q_ASSERT(QThread::currentThread() == thread());
        const auto less = [&](const Row &a, const Row &b) { return keyOf(a) < keyOf(b); };
        if (!std::is_sorted(next.cbegin(), next.cend(), less)) {
            std::stable_sort(next.begin(), next.end(), less);
        }
        // Equality first: most rows keep their key, and == on strings is cheaper than <.
        const auto same = [&](const Row &a, const Row &b) { return keyOf(a) == keyOf(b); };
        next.erase(std::unique(next.begin(), next.end(), same), next.end());

        // The views see head + old[t...]; each step moves rows from `old` or `next` to `head`.
        std::vector<Row> &head = rows.m_head;
        std::vector<Row> &old = rows.m_tail;
        std::size_t &t = rows.m_tailStart;
        old.swap(head);
        head.swap(rows.m_spare);
        head.clear();
        head.reserve(next.size());
        t = 0;

        RowChanges changes;
        std::vector<std::pair<qsizetype, quint64>> changed; // row, columns
        std::vector<Row> updated; // the new values of the `changed` rows
        std::size_t j = 0;
        while (t < old.size() || j < next.size()) {
            const auto at = qsizetype(head.size());
            if (t < old.size() && j < next.size() && same(old[t], next[j])) {
                // A changed row keeps showing its old values until its dataChanged: a sorting
                // proxy places the rows inserted meanwhile by the values it has sorted by.
                if (const quint64 columns = changedColumns(old[t], next[j])) {
                    changed.emplace_back(at, columns);
                    updated.push_back(std::move(next[j]));
                }
                head.push_back(std::move(old[t]));
                ++t; // the row stays where it was shown
                ++j;
            } else if (j == next.size() || (t < old.size() && less(old[t], next[j]))) {
                std::size_t end = t + 1; // departed: old rows before the next new key
                while (end < old.size() && (j == next.size() || less(old[end], next[j]))) {
                    ++end;
                }
                const auto count = qsizetype(end - t);
                beginRemoveRows(QModelIndex(), int(at), int(at + count - 1));
                t = end;
                endRemoveRows();
                changes.removed += count;
            } else {
                std::size_t end = j + 1; // arrived: new rows before the next old key
                while (end < next.size() && (t == old.size() || less(next[end], old[t]))) {
                    ++end;
                }
                const auto count = qsizetype(end - j);
                beginInsertRows(QModelIndex(), int(at), int(at + count - 1));
                head.insert(head.end(), std::make_move_iterator(next.begin() + qsizetype(j)),
                            std::make_move_iterator(next.begin() + qsizetype(end)));
                endInsertRows();
                j = end;
                changes.inserted += count;
            }
        }
        old.clear();
        old.swap(rows.m_spare);
        next.clear();
        t = 0;
        // Rows before a recorded one never moved again, so the numbers still hold. Each run of
        // adjacent changed rows takes its new values just before its dataChanged, so that a
        // sorting proxy placing one run compares with rows whose values it has already seen.
        changes.changed = qsizetype(changed.size());
        std::size_t runs = 0;
        for (std::size_t r = 0; r < changed.size(); ++r) {
            runs += (r == 0 || changed[r].first != changed[r - 1].first + 1) ? 1 : 0;
        }
        if (runs > MaxSeparateChangeRuns) {
            quint64 columns = 0;
            for (std::size_t r = 0; r < changed.size(); ++r) {
                head[std::size_t(changed[r].first)] = std::move(updated[r]);
                columns |= changed[r].second;
            }
            emitChanged(changed.front().first, changed.back().first, columns);
            ++changes.dataChangedSignals;
            return changes;
        }
        std::size_t k = 0;
        while (k < changed.size()) {
            const std::size_t first = k;
            quint64 columns = 0;
            do {
                head[std::size_t(changed[k].first)] = std::move(updated[k]);
                columns |= changed[k].second;
                ++k;
            } while (k < changed.size() && changed[k].first == changed[k - 1].first + 1);
            emitChanged(changed[first].first, changed[k - 1].first, columns);
            ++changes.dataChangedSignals;
        }
        return changes;
    }

private:
    // dataChanged for rows first..last over the columns of the mask.
    void emitChanged(qsizetype first, qsizetype last, quint64 columns);
};

} // namespace rt::dashboard
