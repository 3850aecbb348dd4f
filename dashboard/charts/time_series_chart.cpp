#include "dashboard/charts/time_series_chart.h"

#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QLineSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>

namespace rt::dashboard {

TimeSeriesChart::TimeSeriesChart(const QString &title, const QString &valueTitle, QWidget *parent)
    : QWidget(parent),
      m_chart(new QChart)
{
    m_chart->setTitle(title);
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setAnimationOptions(QChart::NoAnimation); // live data: animations only lag
    m_timeAxis = new QDateTimeAxis(m_chart); // owned by the chart once added
    m_timeAxis->setFormat(QStringLiteral("HH:mm:ss"));
    m_timeAxis->setTitleText(tr("Time"));
    m_valueAxis = new QValueAxis(m_chart); // owned by the chart once added
    m_valueAxis->setTitleText(valueTitle);
    m_valueAxis->setLabelFormat(QStringLiteral("%.2f"));
    m_valueAxis->setMin(0);
    m_chart->addAxis(m_timeAxis, Qt::AlignBottom);
    m_chart->addAxis(m_valueAxis, Qt::AlignLeft);

    m_view = new QChartView(m_chart, this); // takes the chart
    m_view->setRenderHint(QPainter::Antialiasing);
    auto *layout = new QVBoxLayout(this); // owned by this widget
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    rescale();
}

void TimeSeriesChart::setSeries(const QString &name, const MetricSeries &series)
{
    replaceLine(name, series);
    rescale();
}

void TimeSeriesChart::setManySeries(const QList<std::pair<QString, MetricSeries>> &series)
{
    qsizetype lines = m_lines.size();
    for (const auto &entry : series) {
        lines += m_lines.contains(entry.first) ? 0 : 1;
    }
    if (lines > MaxLegendEntries) {
        m_chart->legend()->setVisible(false); // before adding: each entry would relayout it
    }
    for (const auto &[name, points] : series) {
        replaceLine(name, points);
    }
    rescale();
}

void TimeSeriesChart::replaceLine(const QString &name, const MetricSeries &series)
{
    QLineSeries *line = m_lines.value(name);
    if (line == nullptr) {
        line = new QLineSeries(m_chart); // owned by the chart
        line->setName(name);
        m_chart->addSeries(line);
        line->attachAxis(m_timeAxis);
        line->attachAxis(m_valueAxis);
        m_lines.insert(name, line);
    }
    line->replace(series.points()); // one repaint, not one per point
    m_data.insert(name, series);
}

void TimeSeriesChart::retainOnly(const QStringList &names)
{
    bool removed = false;
    for (auto it = m_lines.begin(); it != m_lines.end();) {
        if (names.contains(it.key())) {
            ++it;
            continue;
        }
        m_chart->removeSeries(it.value());
        delete it.value();
        m_data.remove(it.key());
        it = m_lines.erase(it);
        removed = true;
    }
    if (removed) {
        rescale();
    }
}

void TimeSeriesChart::setWindowMs(qint64 windowMs)
{
    m_windowMs = std::max<qint64>(1000, windowMs);
    rescale();
}

QStringList TimeSeriesChart::seriesNames() const
{
    QStringList names = m_lines.keys();
    names.sort();
    return names;
}

qsizetype TimeSeriesChart::pointCount(const QString &name) const
{
    const QLineSeries *line = m_lines.value(name);
    return line == nullptr ? -1 : line->count();
}

bool TimeSeriesChart::isLegendShown() const
{
    return m_chart->legend()->isVisible();
}

double TimeSeriesChart::valueAxisMaximum() const
{
    return m_valueAxis->max();
}

qint64 TimeSeriesChart::timeAxisEndMs() const
{
    return m_timeAxis->max().toMSecsSinceEpoch();
}

void TimeSeriesChart::rescale()
{
    qint64 newest = 0;
    double largest = 0;
    for (const MetricSeries &series : std::as_const(m_data)) {
        if (const auto last = series.last()) {
            newest = std::max(newest, last->atMs);
        }
        if (const auto maximum = series.maximum()) {
            largest = std::max(largest, *maximum);
        }
    }
    if (newest == 0) {
        newest = QDateTime::currentMSecsSinceEpoch();
    }
    // Setting an axis relayouts every line: only when the range really moves.
    const QDateTime start = QDateTime::fromMSecsSinceEpoch(newest - m_windowMs);
    const QDateTime end = QDateTime::fromMSecsSinceEpoch(newest);
    if (m_timeAxis->min() != start || m_timeAxis->max() != end) {
        m_timeAxis->setRange(start, end);
    }
    // Some headroom above the largest value; at least 1 so an idle cluster is a flat line low
    // in the chart, not a line glued to the top.
    const double top = std::max(1.0, largest * 1.15);
    if (m_valueAxis->max() != top) {
        m_valueAxis->setRange(0, top);
    }
    const bool legend = m_lines.size() <= MaxLegendEntries;
    if (m_chart->legend()->isVisible() != legend) {
        m_chart->legend()->setVisible(legend);
    }
}

} // namespace rt::dashboard
