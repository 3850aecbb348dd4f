#pragma once

#include "server/cdc/tenant_database.h"

#include <QByteArray>
#include <QString>

#include <vector>

namespace rt::cdc {

// The cluster as the tenant databases see it: where each tenant's change stream runs (one
// node per tenant: the owner of the tenant's stream claim) and how to reach the other nodes.
// CdcService calls it on the cdc thread; implementations never block and answer later through
// CdcService's cluster entry points (setStreamOwner, remoteSubscribe, ...).
//
// One implementation (the app's StreamCoordinator); a single node has none and runs every
// stream itself.
class StreamCluster
{
public:
    virtual ~StreamCluster() = default;

    // This node has clients of the tenant that need its stream (postgres_changes, database
    // broadcasts): find or place the owner and report it with CdcService::setStreamOwner.
    virtual void need(const QByteArray &tenantId) = 0;
    // This node no longer needs the tenant's stream (idle); an owner gives its claim up.
    virtual void release(const QByteArray &tenantId) = 0;
    // This node owns the tenant's stream and it runs: waiters elsewhere may go on.
    virtual void streaming(const QByteArray &tenantId) = 0;

    // Messages to other nodes (node links).
    virtual void sendSubscribe(const QString &owner, quint64 token,
                               const SubscribeRequest &request) = 0;
    virtual void sendUnsubscribe(const QString &owner, const QByteArray &tenantId,
                                 quint64 memberId) = 0;
    virtual void sendSubscribeAnswer(const QString &node, const QByteArray &tenantId, quint64 token,
                                     const SubscribeOutcome &outcome, bool retry) = 0;
    // postgres_changes for `members` (sorted member ids of `node`'s process `incarnation`, as
    // its Subscribe said) of `topic`; delivered once each and in order, also across broken
    // links and a short absence of that node.
    virtual void sendDelivery(const QString &node, quint64 incarnation,
                              const pubsub::TopicKey &topic, const QByteArray &event,
                              const QByteArray &payload, std::vector<quint64> members) = 0;
};

} // namespace rt::cdc
