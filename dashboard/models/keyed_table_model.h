#pragma once

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QThread>
#include <QThreadPool>

#include <algorithm>
#include <compare>
#include <iterator>
#include <optional>
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

// Frees `values` on a pool thread: the last reference to 10,000s of rows frees 100,000s of
// blocks, milliseconds a GUI thread should not spend. Their members are implicitly shared with
// atomic reference counts, so copies still held elsewhere are unaffected.
template <typename T>
void releaseInBackground(std::vector<T> &&values)
{
    if (!values.empty()) {
        QThreadPool::globalInstance()->start([released = std::move(values)] {});
    }
}

// The rows of a KeyedTableModel, sorted by key. Outside KeyedTableModel::applyPlan() they are
// one vector; during it, what the views see is the new rows already announced followed by the
// rest of the previous rows, so that every insert and removal signal costs only the rows it
// names, not a shift of all the rows after it. Index with [] at any time.
template <typename Row>
class KeyedRows
{
public:
    qsizetype size() const { return qsizetype(m_shown + m_previous.size() - m_previousStart); }
    bool isEmpty() const { return size() == 0; }
    const Row &operator[](qsizetype i) const
    {
        const auto at = std::size_t(i);
        return at < m_shown ? m_rows[at] : m_previous[m_previousStart + (at - m_shown)];
    }
    // A random-access iterator over the rows as the views see them (valid in both states, so
    // std::lower_bound by key works even from a slot connected to a row signal).
    // Named as the standard containers name theirs, so that generic code finds it.
    class const_iterator // NOLINT(readability-identifier-naming)
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

    // All the rows, between updates (what planRows() compares with).
    const std::vector<Row> &settled() const
    {
        Q_ASSERT(m_previous.empty());
        return m_rows;
    }

private:
    friend class KeyedTableModel;
    std::vector<Row> m_rows; // all the rows; during applyPlan() the new ones, shown up to m_shown
    std::size_t m_shown = 0;
    std::vector<Row>
            m_previous; // during applyPlan(): the previous rows, shown from m_previousStart
    std::size_t m_previousStart = 0;
};

// What turns a model's rows into the next ones: worked out by planRows() on any thread, told
// to the views by KeyedTableModel::applyPlan() on the GUI thread.
template <typename Row>
struct RowPlan
{
    // One run of rows, in order: kept (possibly changed), removed from the previous rows, or
    // inserted from the next ones.
    struct Run
    {
        enum class Kind : quint8 { Keep, Remove, Insert };
        Kind kind;
        std::size_t count;
    };
    std::vector<Row> rows; // the next rows by key; changed rows still hold their previous values
    std::vector<Run> runs;
    std::vector<std::pair<qsizetype, quint64>> changed; // row in `rows`, columns that differ
    std::vector<Row> updated; // the new values of the `changed` rows, in the same order
    const void *basis = nullptr; // the rows it was planned from (applyPlan() checks)
};

// Compares `current` (sorted by keyOf, unique) with `next` (any order; duplicates keep the
// first) and plans the update. Pure: it only reads `current`, so it may run on a pool thread
// while the GUI thread reads the same rows (their members are implicitly shared with atomic
// reference counts), as long as nothing changes them meanwhile. `keyOf(row)` returns something
// ordered with < (e.g. std::tie of members); `changedColumns(old, next)` returns a bit mask of
// the columns whose display differs (0: unchanged; such a row still takes its new value, silently).
template <typename Row, typename KeyOf, typename ChangedColumns>
RowPlan<Row> planRows(const KeyedRows<Row> &current, std::vector<Row> next, KeyOf keyOf,
                      ChangedColumns changedColumns)
{
    const auto less = [&](const Row &a, const Row &b) { return keyOf(a) < keyOf(b); };
    if (!std::is_sorted(next.cbegin(), next.cend(), less)) {
        std::stable_sort(next.begin(), next.end(), less);
    }
    // Equality first: most rows keep their key, and == on strings is cheaper than <.
    const auto same = [&](const Row &a, const Row &b) { return keyOf(a) == keyOf(b); };
    next.erase(std::unique(next.begin(), next.end(), same), next.end());

    using Run = typename RowPlan<Row>::Run;
    RowPlan<Row> plan;
    plan.basis = &current;
    plan.rows.reserve(next.size());
    const auto addRun = [&plan](typename Run::Kind kind, std::size_t count) {
        if (!plan.runs.empty() && plan.runs.back().kind == kind) {
            plan.runs.back().count += count;
        } else {
            plan.runs.push_back(Run{ kind, count });
        }
    };
    const std::vector<Row> &old = current.settled();
    std::size_t t = 0;
    std::size_t j = 0;
    while (t < old.size() || j < next.size()) {
        if (t < old.size() && j < next.size() && same(old[t], next[j])) {
            // A changed row keeps showing its old values until its dataChanged: a sorting
            // proxy places the rows inserted meanwhile by the values it has sorted by.
            if (const quint64 columns = changedColumns(old[t], next[j])) {
                plan.changed.emplace_back(qsizetype(plan.rows.size()), columns);
                plan.updated.push_back(std::move(next[j]));
                plan.rows.push_back(old[t]);
            } else {
                plan.rows.push_back(std::move(next[j]));
            }
            addRun(Run::Kind::Keep, 1);
            ++t;
            ++j;
        } else if (j == next.size() || (t < old.size() && less(old[t], next[j]))) {
            std::size_t end = t + 1; // departed: old rows before the next new key
            while (end < old.size() && (j == next.size() || less(old[end], next[j]))) {
                ++end;
            }
            addRun(Run::Kind::Remove, end - t);
            t = end;
        } else {
            std::size_t end = j + 1; // arrived: new rows before the next old key
            while (end < next.size() && (t == old.size() || less(next[end], old[t]))) {
                ++end;
            }
            plan.rows.insert(plan.rows.end(), std::make_move_iterator(next.begin() + qsizetype(j)),
                             std::make_move_iterator(next.begin() + qsizetype(end)));
            addRun(Run::Kind::Insert, end - j);
            j = end;
        }
    }
    return plan;
}

// A table whose rows are kept sorted by a unique key (node id, tenant, from->to, ...) and are
// replaced by a whole new list at once: planRows() works out the difference (on any thread) and
// applyPlan() tells the views exactly that — beginRemoveRows/beginInsertRows for runs of departed
// and arrived keys, one dataChanged per run of adjacent changed rows (spanning the changed
// columns), or a single one from the first to the last changed row when the changes are
// scattered over more than MaxSeparateChangeRuns runs — and never resets the model, so
// selections, scroll positions and proxies survive every update. Lives on the GUI thread; rows
// change only there.
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

    // Whether row `left` sorts before row `right` in `column`, exactly as a sorting proxy
    // compares their SortRole values; nullopt: compare those. KeyedSortProxy asks this first:
    // sorting 10,000 rows makes ~130,000 comparisons, each two QVariants otherwise. Models
    // answer for their large tables' columns.
    virtual std::optional<bool> rowLessThan(int left, int right, int column) const;

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

    // Tells the views what `plan` (made by planRows() from these `rows`) changes, in one pass:
    // beginRemoveRows/beginInsertRows for each run of departed and arrived keys, then
    // dataChanged for the changed rows. The previous rows are freed on a pool thread.
    template <typename Row>
    RowChanges applyPlan(KeyedRows<Row> &rows, RowPlan<Row> &&plan)
    {
        Q_ASSERT(QThread::currentThread() == thread());
        Q_ASSERT(plan.basis == &rows);
        // The views see m_rows[0, m_shown) + m_previous[m_previousStart...]; each run moves
        // the boundary.
        rows.m_previous.swap(rows.m_rows);
        rows.m_previousStart = 0;
        rows.m_rows = std::move(plan.rows);
        rows.m_shown = 0;
        RowChanges changes;
        announceRuns(rows, plan.runs, changes);
        Q_ASSERT(rows.m_shown == rows.m_rows.size());
        Q_ASSERT(rows.m_previousStart == rows.m_previous.size());
        // 10,000s of rows are 100,000s of blocks to free: not on this thread.
        releaseInBackground(std::exchange(rows.m_previous, {}));
        rows.m_previousStart = 0;
        announceChangedRows(rows.m_rows, plan.changed, plan.updated, changes);
        releaseInBackground(std::move(plan.updated)); // now the previous values of changed rows
        return changes;
    }

    // planRows() and applyPlan() at once, on the GUI thread (small tables, tests).
    template <typename Row, typename KeyOf, typename ChangedColumns>
    RowChanges applyRows(KeyedRows<Row> &rows, std::vector<Row> next, KeyOf keyOf,
                         ChangedColumns changedColumns)
    {
        return applyPlan(rows, planRows(rows, std::move(next), keyOf, changedColumns));
    }

private:
    // Moves the shown boundary of `rows` over each run, removals and insertions between their
    // begin and end signals, counting them in `changes`.
    template <typename Row>
    void announceRuns(KeyedRows<Row> &rows, const std::vector<typename RowPlan<Row>::Run> &runs,
                      RowChanges &changes)
    {
        using Run = typename RowPlan<Row>::Run;
        for (const Run &run : runs) {
            const auto at = qsizetype(rows.m_shown);
            const auto count = qsizetype(run.count);
            switch (run.kind) {
            case Run::Kind::Keep:
                rows.m_shown += run.count;
                rows.m_previousStart += run.count;
                break;
            case Run::Kind::Remove:
                beginRemoveRows(QModelIndex(), int(at), int(at + count - 1));
                rows.m_previousStart += run.count;
                endRemoveRows();
                changes.removed += count;
                break;
            case Run::Kind::Insert:
                beginInsertRows(QModelIndex(), int(at), int(at + count - 1));
                rows.m_shown += run.count;
                endInsertRows();
                changes.inserted += count;
                break;
            }
        }
    }

    // Swaps the `updated` values of the `changed` rows into `now` and emits their dataChanged,
    // counting them in `changes`; afterwards `updated` holds their previous values.
    template <typename Row>
    void announceChangedRows(std::vector<Row> &now,
                             const std::vector<std::pair<qsizetype, quint64>> &changed,
                             std::vector<Row> &updated, RowChanges &changes)
    {
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
                std::swap(now[std::size_t(changed[r].first)], updated[r]);
                columns |= changed[r].second;
            }
            emitChanged(changed.front().first, changed.back().first, columns);
            ++changes.dataChangedSignals;
        } else {
            std::size_t k = 0;
            while (k < changed.size()) {
                const std::size_t first = k;
                quint64 columns = 0;
                do {
                    std::swap(now[std::size_t(changed[k].first)], updated[k]);
                    columns |= changed[k].second;
                    ++k;
                } while (k < changed.size() && changed[k].first == changed[k - 1].first + 1);
                emitChanged(changed[first].first, changed[k - 1].first, columns);
                ++changes.dataChangedSignals;
            }
        }
    }

    // dataChanged for rows first..last over the columns of the mask.
    void emitChanged(qsizetype first, qsizetype last, quint64 columns);
};

// A sorting (and filtering) proxy over a KeyedTableModel, directly or through other proxies:
// sorting by SortRole compares rows with KeyedTableModel::rowLessThan(). Lives on the GUI thread.
class KeyedSortProxy : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    explicit KeyedSortProxy(QObject *parent = nullptr);

protected:
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;
};

} // namespace rt::dashboard
