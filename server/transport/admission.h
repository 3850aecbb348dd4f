#pragma once

#include <QByteArray>
#include <QHash>

#include <atomic>
#include <mutex>

namespace rt::transport {

// The node's gate in front of every accepted socket, judged before any protocol work: at most
// maxConnections sockets open on the node, and at most maxPendingPerAddress sockets from one
// remote address that are not (yet) WebSockets, so that a slowloris from one host cannot hold
// the descriptors real clients need. A refused socket gets a short HTTP answer (503 or 429,
// JSON) and is closed. Thread-safe: the listener admits on the main thread, workers release
// from theirs; one short mutex per accept and per close.
class ConnectionAdmission
{
public:
    struct Limits
    {
        qsizetype maxConnections = 0; // 0: no limit
        qsizetype maxPendingPerAddress = 0; // 0: no limit
    };
    enum class Verdict { Admitted, NodeFull, AddressBusy };

    explicit ConnectionAdmission(Limits limits) : m_limits(limits) { }

    // Counts the socket as open and pending when admitted.
    Verdict admit(const QByteArray &address);
    // The socket became a WebSocket: no longer counted against its address.
    void established(const QByteArray &address);
    // The socket closed.
    void release(const QByteArray &address, bool pending);

    qsizetype openConnections() const { return m_open.load(std::memory_order_relaxed); }
    qsizetype pendingFrom(const QByteArray &address) const;
    const Limits &limits() const { return m_limits; }

    // The complete HTTP response a refused socket gets (Connection: close).
    static QByteArray refusalResponse(Verdict verdict);

private:
    const Limits m_limits;
    std::atomic<qsizetype> m_open{ 0 };
    mutable std::mutex m_mutex;
    QHash<QByteArray, qsizetype> m_pending; // per address; entries at zero are removed
};

// One admitted socket's place at the gate, held by its TcpConnection; gives the place back when
// destroyed. Move-only; an empty ticket (no admission configured) does nothing.
class AdmissionTicket
{
public:
    AdmissionTicket() = default;
    AdmissionTicket(ConnectionAdmission *admission, QByteArray address)
        : m_admission(admission),
          m_address(std::move(address))
    { }
    AdmissionTicket(AdmissionTicket &&other) noexcept { *this = std::move(other); }
    AdmissionTicket &operator=(AdmissionTicket &&other) noexcept;
    AdmissionTicket(const AdmissionTicket &) = delete;
    AdmissionTicket &operator=(const AdmissionTicket &) = delete;
    ~AdmissionTicket();

    // The socket is a WebSocket now.
    void establish();
    bool isPending() const { return m_admission != nullptr && m_pending; }

private:
    ConnectionAdmission *m_admission = nullptr;
    QByteArray m_address;
    bool m_pending = true;
};

} // namespace rt::transport
