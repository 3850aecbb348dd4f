#include "server/transport/admission.h"

#include <QByteArrayView>

#include <utility>

namespace rt::transport {

namespace {

QByteArray jsonResponse(QByteArrayView statusLine, QByteArrayView message)
{
    const QByteArray body = QByteArrayLiteral("{\"message\":\"") + message + "\"}";
    return QByteArrayLiteral("HTTP/1.1 ") + statusLine
            + QByteArrayLiteral("\r\ncontent-type: application/json; charset=utf-8\r\n"
                                "connection: close\r\ncontent-length: ")
            + QByteArray::number(body.size()) + QByteArrayLiteral("\r\n\r\n") + body;
}

} // namespace

ConnectionAdmission::Verdict ConnectionAdmission::admit(const QByteArray &address)
{
    const std::lock_guard lock(m_mutex);
    if (m_limits.maxConnections > 0
        && m_open.load(std::memory_order_relaxed) >= m_limits.maxConnections) {
        return Verdict::NodeFull;
    }
    qsizetype &pending = m_pending[address];
    if (m_limits.maxPendingPerAddress > 0 && pending >= m_limits.maxPendingPerAddress) {
        return Verdict::AddressBusy;
    }
    ++pending;
    m_open.fetch_add(1, std::memory_order_relaxed);
    return Verdict::Admitted;
}

void ConnectionAdmission::established(const QByteArray &address)
{
    const std::lock_guard lock(m_mutex);
    const auto it = m_pending.find(address);
    if (it != m_pending.end() && --*it <= 0) {
        m_pending.erase(it);
    }
}

void ConnectionAdmission::release(const QByteArray &address, bool pending)
{
    if (pending) {
        established(address);
    }
    m_open.fetch_sub(1, std::memory_order_relaxed);
}

qsizetype ConnectionAdmission::pendingFrom(const QByteArray &address) const
{
    const std::lock_guard lock(m_mutex);
    return m_pending.value(address);
}

QByteArray ConnectionAdmission::refusalResponse(Verdict verdict)
{
    static const QByteArray NodeFull = jsonResponse(
            "503 Service Unavailable", "Too many connections to this node, try another one");
    static const QByteArray AddressBusy = jsonResponse(
            "429 Too Many Requests", "Too many connections from this address are not yet open");
    return verdict == Verdict::NodeFull ? NodeFull : AddressBusy;
}

AdmissionTicket &AdmissionTicket::operator=(AdmissionTicket &&other) noexcept
{
    if (this != &other) {
        if (m_admission != nullptr) {
            m_admission->release(m_address, m_pending);
        }
        m_admission = std::exchange(other.m_admission, nullptr);
        m_address = std::move(other.m_address);
        m_pending = other.m_pending;
    }
    return *this;
}

AdmissionTicket::~AdmissionTicket()
{
    if (m_admission != nullptr) {
        m_admission->release(m_address, m_pending);
    }
}

void AdmissionTicket::establish()
{
    if (m_admission != nullptr && m_pending) {
        m_pending = false;
        m_admission->established(m_address);
    }
}

} // namespace rt::transport
