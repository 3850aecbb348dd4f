#pragma once

#include <QtGlobal>

#include <atomic>
#include <memory>

namespace rt {

// What one regulated stream (a tenant's change stream) has handed to fan-out and not yet seen
// written: the bytes of its messages that workers have not delivered yet, the bytes of its frames
// queued in sockets, and how many of those sockets are above their high-water mark. Producers
// read it to decide whether to hand out more; consumers on any thread charge and settle it.
// Lock-free; every charge must be matched by exactly one settle of the same amount.
class FlowLedger
{
public:
    void chargeMessage(qint64 bytes) { m_messageBytes.fetch_add(bytes, std::memory_order_relaxed); }
    void settleMessage(qint64 bytes) { m_messageBytes.fetch_sub(bytes, std::memory_order_relaxed); }
    void chargeSocket(qint64 bytes) { m_socketBytes.fetch_add(bytes, std::memory_order_relaxed); }
    void settleSocket(qint64 bytes) { m_socketBytes.fetch_sub(bytes, std::memory_order_relaxed); }
    // A socket carrying this stream's frames went above (true) or back below (false) its
    // high-water mark, or was cut off while above it (false).
    void noteSlowSocket(bool slow)
    {
        m_slowSockets.fetch_add(slow ? 1 : -1, std::memory_order_acq_rel);
    }

    // Published but not yet with every recipient's socket.
    qint64 undeliveredBytes() const { return m_messageBytes.load(std::memory_order_relaxed); }
    // Queued in sockets, not yet written to the kernel.
    qint64 socketBytes() const { return m_socketBytes.load(std::memory_order_relaxed); }
    qint64 outstandingBytes() const { return undeliveredBytes() + socketBytes(); }
    int slowSockets() const { return m_slowSockets.load(std::memory_order_acquire); }

private:
    std::atomic<qint64> m_messageBytes{ 0 };
    std::atomic<qint64> m_socketBytes{ 0 };
    std::atomic<int> m_slowSockets{ 0 };
};

using FlowLedgerPtr = std::shared_ptr<FlowLedger>;

} // namespace rt
