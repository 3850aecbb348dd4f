#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace rt::test {

// QSemaphore's interface on std::mutex and std::condition_variable, for tests that hand values
// between threads. Debian's Qt is not built with ThreadSanitizer and QSemaphore waits on a futex
// it cannot see, so every value handed through one would be reported as a race; the pthread
// primitives under this one are seen, and each release() happens before the acquire it wakes.
class Semaphore
{
public:
    explicit Semaphore(int initial = 0) : m_available(initial) { }

    // Notifies with the lock held: a waiter that sees the count may destroy the semaphore at
    // once, and must not do so while this thread is still inside notify_all().
    void release(int n = 1)
    {
        const std::lock_guard lock(m_mutex);
        m_available += n;
        m_changed.notify_all();
    }

    void acquire(int n = 1)
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [&] { return m_available >= n; });
        m_available -= n;
    }

    // Like QSemaphore::tryAcquire(n, timeout): false if `n` were not available in time.
    bool tryAcquire(int n, int timeoutMs)
    {
        std::unique_lock lock(m_mutex);
        if (!m_changed.wait_for(lock, std::chrono::milliseconds(timeoutMs),
                                [&] { return m_available >= n; })) {
            return false;
        }
        m_available -= n;
        return true;
    }

    bool tryAcquire(int n = 1) { return tryAcquire(n, 0); }

    int available() const
    {
        const std::lock_guard lock(m_mutex);
        return m_available;
    }

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    int m_available; // guarded by m_mutex
};

} // namespace rt::test
