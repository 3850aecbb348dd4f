#pragma once

#include "server/cdc/subscription_registry.h"
#include "server/cdc/tenant_database.h"
#include "shared/core/result.h"

#include <QList>
#include <QObject>
#include <QUuid>

#include <functional>

namespace rt::postgres {
class Pool;
}

namespace rt::cdc {

// A channel's postgres_changes bindings as rows of the tenant's realtime.subscription (upstream's
// Subscriptions.create/delete): checked against the publication, stored through the tenant's own
// validation trigger (whose texts are the client's errors), replaced in one transaction on a
// token refresh, and removed in batches when channels leave. It turns a subscribe request into
// the Subscriber the registry matches changes for.
// Lives on the cdc thread with its TenantDatabase (its parent); the pool it reaches may be
// replaced or gone (reconnects), so it is asked for each time.
class SubscriptionStore : public QObject
{
    Q_OBJECT
public:
    using PoolAccess = std::function<postgres::Pool *()>;

    SubscriptionStore(QByteArray publication, PoolAccess pool, QObject *parent = nullptr);

    // Stores `request`'s bindings, replacing the rows of `replaced` (the same channel before a
    // token refresh; may be null). `done` gets the subscriber to register, or the text of the
    // error to push to the channel. The pool must be open.
    void store(SubscribeRequest request, const Subscriber *replaced,
               std::function<void(Result<Subscriber, QString>)> done);
    // Deletes these rows soon (leaves come in bursts: one DELETE per burst).
    void remove(const QList<QUuid> &ids);

private:
    void flushRemovals();

    QByteArray m_publication;
    PoolAccess m_pool;
    QList<QUuid> m_pendingRemovals;
};

} // namespace rt::cdc
