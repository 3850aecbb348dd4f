#pragma once

#include "server/metrics/family.h"
#include "server/metrics/metric_types.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace rt::metrics {

// The node's metric families and their Prometheus text rendering (format 0.0.4).
//
// Threads: every method may be called from any thread. Declarations happen at start-up (see
// Catalog); hot paths then only touch series objects (lock-free atomics), never the registry.
// render() runs on whichever thread serves GET /metrics: it copies the family list under the
// registry mutex, then each family's series list under that family's shared lock, and formats
// without holding either, so it never makes an incrementer wait.
//
// Ownership: owned by the server (one per process); must outlive every thread that uses a
// Family& or an unlabelled Counter&/Gauge&/Histogram& it handed out. Series handed out as
// std::shared_ptr stay valid even after that (see Family).
class Registry
{
public:
    // `globalLabels` are added to every series of every family (upstream: host, id, region).
    // Invalid or duplicate names are a start-up error (qFatal).
    explicit Registry(LabelPairs globalLabels = {});
    ~Registry();
    Registry(const Registry &) = delete;
    Registry &operator=(const Registry &) = delete;

    // Why declaring `spec` as `type` would fail, or nothing if it would succeed: metric name
    // syntax, label name syntax (no "__" prefix, no "le" on histograms), duplicate label names,
    // clashes with a global label, buckets (histograms only; finite, strictly ascending), and
    // name clashes with declared families, including a histogram's _bucket/_sum/_count series.
    std::optional<Error> checkDeclaration(MetricType type, const FamilySpec &spec) const;

    // Declarations. A spec that checkDeclaration() rejects is a programming error and stops the
    // process with one clear message (declarations are constant start-up code). The returned
    // references stay valid for the registry's lifetime, also after removeFamily().
    CounterFamily &counterFamily(const FamilySpec &spec);
    GaugeFamily &gaugeFamily(const FamilySpec &spec);
    HistogramFamily &histogramFamily(const FamilySpec &spec);
    // Families without labels, answered with their single series.
    Counter &counter(const QByteArray &name, const QByteArray &help);
    Gauge &gauge(const QByteArray &name, const QByteArray &help);
    Histogram &histogram(const QByteArray &name, const QByteArray &help,
                         std::vector<double> buckets);
    // Gauges computed at render time, on the rendering thread (see CallbackFamily for the
    // contract). removeFamily() guarantees the callback is not running and never runs again.
    void callbackGauge(const QByteArray &name, const QByteArray &help,
                       std::function<double()> callback);
    void callbackGaugeFamily(const FamilySpec &spec,
                             std::function<void(CallbackSamples &)> callback);

    // Stops rendering a family (false if unknown). Its object is kept until the registry dies,
    // so references handed out stay valid; a callback family's callback is disarmed first.
    bool removeFamily(QByteArrayView name);
    // Drops every series, of any family having label `labelName`, whose value for it is
    // `value` (e.g. "tenant", a deleted tenant's external id). Returns how many. See Family for
    // what happens to series pointers still held.
    qsizetype removeSeries(QByteArrayView labelName, QByteArrayView value);

    std::optional<FamilyInfo> info(QByteArrayView name) const;
    std::vector<FamilyInfo> families() const; // sorted by name
    const LabelPairs &globalLabels() const { return m_globalLabels; }

    // The whole exposition: families sorted by name, their series sorted by label values (in
    // declaration order), labels within a series sorted by name, histogram `le` last. Families
    // without series are left out. Serve with ContentType (text_format.h).
    QByteArray render() const;

private:
    template <typename F, typename... Extra>
    F &declare(MetricType type, const FamilySpec &spec, bool isCallback, Extra &&...extra);

    const LabelPairs m_globalLabels;
    mutable std::mutex m_mutex;
    std::map<QByteArray, std::shared_ptr<FamilyBase>> m_families; // guarded by m_mutex
    std::vector<std::shared_ptr<FamilyBase>> m_removed; // guarded by m_mutex; see removeFamily
    mutable std::atomic<qsizetype> m_renderSizeHint{ 0 };
};

} // namespace rt::metrics
