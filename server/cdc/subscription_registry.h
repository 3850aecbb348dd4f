#pragma once

#include "server/pubsub/topic_key.h"
#include "server/subscriptions/filter.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QStringList>
#include <QUuid>

#include <memory>
#include <optional>
#include <vector>

namespace rt::cdc {

// The postgres_changes bindings of one channel on one table: a row of realtime.subscription.
struct Binding
{
    QUuid subscriptionId;
    qint64 id = 0; // the id echoed in the join reply and sent in `ids`
    QByteArray schema;
    QByteArray table;
    QByteArray action; // "*", "INSERT", "UPDATE", "DELETE"
    QList<subscriptions::Filter> filters;
    std::optional<QStringList> select; // selected columns (the primary key is always kept)
};

// A channel subscribed to postgres_changes: where its changes go and as whom RLS is evaluated.
struct Subscriber
{
    quint64 memberId = 0;
    pubsub::TopicKey topic;
    bool legacy = false; // join without `config`: event = change type, bare payload (§6.7)
    QByteArray role; // the JWT `role` claim
    QByteArray claimsJson; // all claims, compact JSON: the RLS identity (one query per distinct)
    QByteArray sub; // the `sub` claim, for request.jwt.claim.sub
    QList<Binding> bindings;
};

// The subscribers of one tenant's change stream, indexed by table. Lives on the cdc thread.
// What must stay true: a subscriber is in the index from the moment its "Subscribed to
// PostgreSQL" is sent until its channel leaves, so every change decoded after that is matched.
class SubscriptionRegistry
{
public:
    struct Entry
    {
        const Subscriber *subscriber = nullptr;
        const Binding *binding = nullptr;
        // Subscribers with the same claims share one RLS identity: a dense number per distinct
        // claimsJson, valid within the snapshot the entry belongs to.
        int claimsSet = 0;
    };

    // The registry at one moment, immutable: a batch of changes is matched against one and may
    // take a while to evaluate (RLS queries), while channels join and leave. Holding the
    // snapshot keeps its subscribers and bindings alive, and its claims set numbers valid.
    struct Snapshot
    {
        std::vector<std::shared_ptr<const Subscriber>> subscribers;
        QHash<QByteArray, std::vector<Entry>> byTable; // "schema\x1ftable"
        int claimsSetCount = 0;

        // The bindings on schema.table, or nullptr when none. A subscriber's bindings are
        // adjacent (the router relies on it).
        const std::vector<Entry> *bindingsOn(const QByteArray &schema,
                                             const QByteArray &table) const;
    };

    SubscriptionRegistry();

    // Adds or replaces (token refresh) the subscriber of `memberId`.
    void add(Subscriber subscriber);
    // Removes it; returns its subscription ids (for deleting the rows), empty if unknown.
    QList<QUuid> remove(quint64 memberId);
    const Subscriber *find(quint64 memberId) const;

    std::shared_ptr<const Snapshot> snapshot() const { return m_snapshot; }
    bool isEmpty() const { return m_subscribers.isEmpty(); }
    qsizetype subscriberCount() const { return m_subscribers.size(); }

private:
    void rebuildSnapshot();

    QHash<quint64, std::shared_ptr<const Subscriber>> m_subscribers;
    std::shared_ptr<const Snapshot> m_snapshot;
};

} // namespace rt::cdc
