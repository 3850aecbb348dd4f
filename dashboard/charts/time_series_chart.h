#pragma once

#include "dashboard/models/metric_series.h"

#include <QHash>
#include <QString>
#include <QStringList>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QDateTimeAxis;
class QLineSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace rt::dashboard {

// A line chart of named time series over a sliding window (a node's CPU load, a tenant's
// messages/s): one line per name, the time axis showing the last `windowMs` up to the newest
// sample, the value axis from 0 to a little above the largest value shown. The only place that
// includes Qt Charts (deprecated from Qt 6.10), so replacing it is a one-folder change.
// Lives on the GUI thread.
class TimeSeriesChart : public QWidget
{
    Q_OBJECT
public:
    TimeSeriesChart(const QString &title, const QString &valueTitle, QWidget *parent = nullptr);

    // Draws `series` as the line called `name` (added on first use).
    void setSeries(const QString &name, const MetricSeries &series);
    // The same for many lines, with one rescale of the axes at the end (100 nodes' lines one by
    // one would rescale, and so relayout every line, 100 times).
    void setManySeries(const QList<std::pair<QString, MetricSeries>> &series);
    // Removes every line whose name is not in `names`.
    void retainOnly(const QStringList &names);
    void setWindowMs(qint64 windowMs);

    QStringList seriesNames() const; // sorted
    qsizetype pointCount(const QString &name) const; // -1 for an unknown line
    double valueAxisMaximum() const;
    // The legend names every line up to MaxLegendEntries lines; beyond that it is hidden (100
    // node names are unreadable and cost the chart a relayout per line).
    static constexpr qsizetype MaxLegendEntries = 12;
    bool isLegendShown() const;
    qint64 timeAxisEndMs() const;

private:
    void replaceLine(const QString &name, const MetricSeries &series);
    void rescale();

    QChart *m_chart = nullptr; // owned by m_view
    QChartView *m_view = nullptr; // child
    QDateTimeAxis *m_timeAxis = nullptr; // owned by m_chart
    QValueAxis *m_valueAxis = nullptr; // owned by m_chart
    QHash<QString, QLineSeries *> m_lines; // owned by m_chart
    QHash<QString, MetricSeries> m_data;
    qint64 m_windowMs = MetricSeries::DefaultWindowMs;
};

} // namespace rt::dashboard
