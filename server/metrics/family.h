#pragma once

#include "server/metrics/counter.h"
#include "server/metrics/gauge.h"
#include "server/metrics/histogram.h"
#include "server/metrics/metric_types.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

#include <atomic>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <utility>
#include <vector>

namespace rt::metrics {

// Label values in the order of FamilySpec::labelNames: family.labels({tenant, "broadcast"}).
using LabelValues = std::initializer_list<QByteArrayView>;
// Registry-wide labels added to every series (upstream: host, id, region).
using LabelPairs = std::vector<std::pair<QByteArray, QByteArray>>;

// A declared metric family as the Registry stores and renders it. Created only by Registry; its
// metadata (info()) never changes after construction, so any thread may read it.
class FamilyBase
{
public:
    FamilyBase(FamilyInfo info, const LabelPairs &globalLabels);
    virtual ~FamilyBase();
    FamilyBase(const FamilyBase &) = delete;
    FamilyBase &operator=(const FamilyBase &) = delete;

    const FamilyInfo &info() const { return m_info; }

    // Appends "# HELP", "# TYPE" and one line per sample; nothing at all when the family has no
    // series. Called by Registry::render() on the rendering thread; never blocks incrementers.
    virtual void render(QByteArray &out) const = 0;
    // Drops every series whose label `labelIndex` equals `value`; returns how many. Any thread.
    virtual qsizetype removeSeriesWith(qsizetype labelIndex, QByteArrayView value);
    // Stops calling user code (callback families); see Registry::removeFamily. Any thread.
    virtual void disarm() { }

protected:
    // `name="value",...` for one series: the family's and the global labels sorted by name,
    // values escaped (and made valid UTF-8). Empty when there are no labels at all.
    QByteArray labelFragment(std::span<const QByteArrayView> values) const;
    void appendHeader(QByteArray &out) const;

private:
    struct RenderLabel
    {
        QByteArray name;
        qsizetype valueIndex; // into the series' values, or -1 for a global label
        QByteArray escapedGlobalValue; // when valueIndex == -1
    };

    const FamilyInfo m_info;
    std::vector<RenderLabel> m_renderLabels; // sorted by name
};

namespace detail {
// Orders series keys (label values in declaration order) byte-wise; also compares with a span of
// views, so lookups do not allocate.
struct KeyLess
{
    using is_transparent = void;
    bool operator()(const std::vector<QByteArray> &a, const std::vector<QByteArray> &b) const;
    bool operator()(const std::vector<QByteArray> &a, std::span<const QByteArrayView> b) const;
    bool operator()(std::span<const QByteArrayView> a, const std::vector<QByteArray> &b) const;
};
} // namespace detail

// A family of series of one kind (Counter, Gauge or Histogram) told apart by label values.
//
// Thread safety: every method may be called from any thread. labels() takes a shared lock to
// find a series and an exclusive one to create it; keep the returned pointer for hot paths, then
// inc()/set()/observe() on it is a lock-free atomic. Rendering copies the series list under the
// shared lock and formats without it.
//
// Lifetime: a series is shared by the family and by the callers holding its std::shared_ptr.
// remove()/clear()/Registry::removeSeries() only drop the family's reference: a worker still
// holding the pointer keeps updating a detached series, which is no longer rendered and is freed
// when the last holder lets go. A later labels() with the same values creates a fresh series
// (a counter reset, which Prometheus handles). Callers should drop stale pointers when told that
// a tenant is gone, to get its memory back.
template <typename Child>
class Family final : public FamilyBase
{
public:
    Family(FamilyInfo info, const LabelPairs &globalLabels);

    // The series for these label values (as many as labelNames, in that order), created on first
    // use. A wrong number of values is a programming error: it is logged once per family and
    // answered with a detached series that is never rendered, never a crash.
    std::shared_ptr<Child> labels(LabelValues values);
    std::shared_ptr<Child> labels(const QList<QByteArray> &values);
    // The single series of a family without labels; lives as long as the family.
    Child &unlabelled() const;

    // Stops rendering the series (see Lifetime). False if there was none. No-ops on a family
    // without labels, whose one series is pinned.
    bool remove(LabelValues values);
    bool remove(const QList<QByteArray> &values);
    void clear();
    qsizetype size() const;
    // Every rendered series as (label values in declaration order, series), copied under the
    // shared lock; read the values afterwards without it (the admin view's rates). Any thread.
    std::vector<std::pair<std::vector<QByteArray>, std::shared_ptr<Child>>> series() const;

    void render(QByteArray &out) const override;
    qsizetype removeSeriesWith(qsizetype labelIndex, QByteArrayView value) override;

private:
    struct Series
    {
        QByteArray fragment; // rendered labels, see labelFragment()
        std::shared_ptr<Child> child;
    };

    std::shared_ptr<Child> lookup(std::span<const QByteArrayView> values);
    bool erase(std::span<const QByteArrayView> values);
    std::shared_ptr<Child> makeChild() const;
    void appendSeries(QByteArray &out, const Series &series) const;

    std::shared_ptr<const std::vector<double>> m_bounds; // histograms
    std::vector<QByteArray> m_boundTexts; // histograms: the `le` values, upstream's notation
    std::shared_ptr<Child> m_pinned; // families without labels: their only series
    mutable std::shared_mutex m_mutex;
    std::map<std::vector<QByteArray>, Series, detail::KeyLess> m_series; // guarded by m_mutex
    std::atomic<bool> m_arityReported{ false };
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

// What a callback family's callback fills in during one render: one value per label set.
class CallbackSamples
{
public:
    explicit CallbackSamples(qsizetype labelCount) : m_labelCount(labelCount) { }

    // Label values as for Family::labels(). A wrong number of values is logged and dropped; of
    // two samples with the same values the last one wins.
    void add(LabelValues values, double value);
    void add(const QList<QByteArray> &values, double value);

    // After the callback: (values, value) sorted by values, duplicates removed.
    std::vector<std::pair<std::vector<QByteArray>, double>> takeSorted();
    bool hasDroppedSamples() const { return m_dropped; }

private:
    void addSample(std::span<const QByteArrayView> values, double value);

    qsizetype m_labelCount;
    std::vector<std::pair<std::vector<QByteArray>, double>> m_samples;
    bool m_dropped = false;
};

// A gauge family whose samples a callback computes at render time (counts kept elsewhere). The
// callback runs on the rendering thread, under this family's mutex, so it never runs twice at
// once and never after disarm() returned. It must be safe to call from that thread and must not
// call Registry::render() or Registry::removeFamily() for this family.
class CallbackFamily final : public FamilyBase
{
public:
    using Callback = std::function<void(CallbackSamples &)>;

    CallbackFamily(FamilyInfo info, const LabelPairs &globalLabels, Callback callback);

    void render(QByteArray &out) const override;
    void disarm() override;

private:
    mutable std::mutex m_mutex;
    Callback m_callback; // guarded by m_mutex; empty once disarmed
};

} // namespace rt::metrics
