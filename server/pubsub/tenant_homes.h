#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMultiHash>
#include <QSet>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

class QObject;

namespace rt::pubsub {

// Where each tenant's home is (docs/design-notes.md, "Positions, history and recovery"): the
// node that holds the claim stream/<tenant> and numbers the tenant's topics, as this node last
// saw it, and whether this node's links reach it. Publishers ask on their own threads whether
// to number a broadcast here, send it to the home, or deliver it unnumbered; the cluster
// thread writes what the claims and links say. Thread-safe (one mutex, short sections).
class TenantHomes
{
public:
    enum class Where {
        None, // no home known: deliver unnumbered
        Here, // this node numbers the tenant's topics
        Remote, // another node does, and a link to it is up: send the message there
        Unreachable, // another node does, but no link to it is up: deliver unnumbered
    };
    struct Home
    {
        Where where = Where::None;
        QString node; // Remote, Unreachable: the home
    };
    // Called (on the writing thread, outside the lock) when this node stops being a tenant's
    // home: its sequences must go, or a later return would continue an epoch that another home
    // numbered meanwhile.
    using HomeLost = std::function<void(const QByteArray &tenantId)>;

    explicit TenantHomes(HomeLost homeLost = {});

    Home homeOf(const QByteArray &tenantId) const;
    // Joins waiting for a home now (ended waits are dropped by the next awaitKnown).
    qsizetype waiterCount() const
    {
        const std::lock_guard lock(m_mutex);
        return m_waiters.size();
    }
    // The tenants this node is the home of, sorted.
    QList<QByteArray> homesHere() const;

    // Any thread. True when the tenant's home is known now; otherwise `known` runs on
    // `receiver`'s thread once it is, or after `timeoutMs` (whichever comes first, once).
    // `receiver` must be a long-lived object of the calling thread (guard short-lived ones
    // inside `known`).
    bool awaitKnown(const QByteArray &tenantId, QObject *receiver, std::function<void()> known,
                    int timeoutMs) const;

    // Cluster thread, before any home is set: this node's id.
    void setSelf(const QString &nodeId);
    // Cluster thread: the claim's owner (empty: no claim).
    void setHome(const QByteArray &tenantId, const QString &nodeId);
    void setConnected(const QString &nodeId, bool connected);
    // Every home, as when the node left the cluster or its backend was replaced.
    void clear();

private:
    HomeLost m_homeLost;
    mutable std::mutex m_mutex;
    QString m_self; // guarded by m_mutex
    QHash<QByteArray, QString> m_homes; // guarded by m_mutex
    QSet<QString> m_connected; // guarded by m_mutex
    struct Waiter
    {
        QObject *receiver = nullptr;
        std::function<void()> once; // runs its target at most once
        std::shared_ptr<std::atomic<bool>> done; // set once it ran (or timed out)
    };
    mutable QMultiHash<QByteArray, Waiter> m_waiters; // guarded by m_mutex
};

} // namespace rt::pubsub
