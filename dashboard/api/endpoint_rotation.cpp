#include "dashboard/api/endpoint_rotation.h"

#include <algorithm>

namespace rt::dashboard {

EndpointRotation::EndpointRotation(Policy policy) : m_policy(policy) { }

void EndpointRotation::setEndpoints(const QList<QUrl> &endpoints)
{
    const QUrl current = this->current();
    m_endpoints = endpoints;
    const qsizetype index = current.isEmpty() ? -1 : m_endpoints.indexOf(current);
    m_index = std::max<qsizetype>(index, 0);
}

EndpointRotation::Attempt EndpointRotation::start()
{
    m_index = 0;
    m_failures = 0;
    return { current(), std::chrono::milliseconds(0), 0 };
}

EndpointRotation::Attempt EndpointRotation::next()
{
    ++m_failures;
    if (!m_endpoints.isEmpty()) {
        m_index = (m_index + 1) % m_endpoints.size();
    }
    return { current(), delayFor(m_failures), m_failures };
}

void EndpointRotation::succeeded()
{
    m_failures = 0;
}

QUrl EndpointRotation::current() const
{
    return m_index < m_endpoints.size() ? m_endpoints.at(m_index) : QUrl();
}

std::chrono::milliseconds EndpointRotation::delayFor(int attempt) const
{
    if (attempt <= 0) {
        return std::chrono::milliseconds(0);
    }
    // Doubling stops at the cap, so a long outage cannot overflow the delay.
    std::chrono::milliseconds delay = m_policy.initialDelay;
    for (int i = 1; i < attempt && delay < m_policy.maxDelay; ++i) {
        delay *= 2;
    }
    return std::min(delay, m_policy.maxDelay);
}

} // namespace rt::dashboard
