#pragma once

#include "server/limits/rate_counter_registry.h"

#include <QObject>
#include <QTimer>

#include <chrono>
#include <functional>

namespace rt::limits {

// Drives a RateCounterRegistry: every `resolution` it calls tickDue() with the registry's clock,
// so each counter ticks within one resolution of its schedule (and a new or restarted counter's
// first tick comes within one resolution of its creation). Lives on one thread (usually a
// dedicated low-traffic thread or the main thread, never a busy worker); it is that thread's
// only user of tickDue(). The registry must outlive it.
class RateCounterTicker : public QObject
{
    Q_OBJECT
public:
    // Receives each pass's result on the ticker's thread, e.g. to feed metrics with the
    // per-tick counts (upstream's telemetry fires for every tick with count > 0).
    using Observer = std::function<void(const RateCounterRegistry::TickPass &)>;

    static constexpr std::chrono::milliseconds DefaultResolution{ 100 };

    explicit RateCounterTicker(RateCounterRegistry &registry,
                               std::chrono::milliseconds resolution = DefaultResolution,
                               QObject *parent = nullptr);
    ~RateCounterTicker() override;

    // Starts / stops the timer. Any thread: from another thread the call is queued to the
    // ticker's thread (the timer can only be started there).
    void start();
    void stop();
    // Whether the timer runs. Ticker's thread.
    bool isActive() const { return m_timer.isActive(); }
    // Set before start(), or on the ticker's thread.
    void setObserver(Observer observer) { m_observer = std::move(observer); }

private:
    void onTimeout();

    RateCounterRegistry &m_registry;
    QTimer m_timer; // child of this, so it follows moveToThread()
    Observer m_observer;
};

} // namespace rt::limits
