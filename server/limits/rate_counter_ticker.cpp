#include "server/limits/rate_counter_ticker.h"

#include "shared/core/happens_before.h"

#include <QThread>

namespace rt::limits {

RateCounterTicker::RateCounterTicker(RateCounterRegistry &registry,
                                     std::chrono::milliseconds resolution, QObject *parent)
    : QObject(parent),
      m_registry(registry),
      m_timer(this)
{
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setInterval(resolution);
    connect(&m_timer, &QTimer::timeout, this, &RateCounterTicker::onTimeout);
}

RateCounterTicker::~RateCounterTicker() = default;

void RateCounterTicker::start()
{
    if (thread() != QThread::currentThread()) {
        invokeQueued(this, [this] { start(); });
        return;
    }
    // Tick right away so that counters created before start() do not wait one resolution.
    onTimeout();
    m_timer.start();
}

void RateCounterTicker::stop()
{
    if (thread() != QThread::currentThread()) {
        invokeQueued(this, [this] { stop(); });
        return;
    }
    m_timer.stop();
}

void RateCounterTicker::onTimeout()
{
    const RateCounterRegistry::TickPass pass = m_registry.tickDue(m_registry.clock().monotonicMs());
    if (m_observer) {
        m_observer(pass);
    }
}

} // namespace rt::limits
