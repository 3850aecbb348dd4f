#pragma once

#include <QList>
#include <QUrl>

#include <chrono>

namespace rt::dashboard {

// Which node to try next after the current one failed, and how long to wait first (the failover
// policy of ConnectionManager). Pure: no timers, no I/O; the caller waits the delay it is told.
//
// Nodes are tried in the order of the endpoint list, starting after the one that failed, round
// and round; the delay doubles with every failed attempt since the last success (initialDelay,
// 2x, 4x, ... up to maxDelay), so a dead node is left at once and a dead cluster is not hammered.
// A success resets the count. Changing the list (a new snapshot) keeps the current node.
class EndpointRotation
{
public:
    struct Policy
    {
        std::chrono::milliseconds initialDelay{ 250 };
        std::chrono::milliseconds maxDelay{ 30000 };
    };

    struct Attempt
    {
        QUrl endpoint;
        std::chrono::milliseconds delay{ 0 }; // wait this long before dialling
        int number = 0; // 0: start(); n: the n-th attempt since the last success (next())
    };

    EndpointRotation() = default;
    explicit EndpointRotation(Policy policy);

    // The candidates, in order of preference (the operator's node first). Keeps the current node
    // if it is still listed (matched by URL), else the current position moves to the first one.
    void setEndpoints(const QList<QUrl> &endpoints);
    const QList<QUrl> &endpoints() const { return m_endpoints; }

    // The first endpoint to dial (the start of a connection): the first listed, no delay.
    // An empty list gives an empty endpoint.
    Attempt start();
    // The current endpoint failed (could not connect, or died): the next one and the delay.
    Attempt next();
    // The current endpoint works: the next failure starts the backoff afresh.
    void succeeded();

    QUrl current() const;
    int failures() const { return m_failures; }
    // The delay before the n-th reconnection attempt since the last success (n >= 1): what the
    // n-th next() returns.
    std::chrono::milliseconds delayFor(int attempt) const;

private:
    Policy m_policy;
    QList<QUrl> m_endpoints;
    qsizetype m_index = 0;
    int m_failures = 0;
};

} // namespace rt::dashboard
