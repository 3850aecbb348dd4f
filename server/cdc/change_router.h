#pragma once

#include "server/cdc/change.h"
#include "server/cdc/subscription_registry.h"
#include "server/pubsub/outbound_message.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QSet>
#include <QString>

#include <variant>
#include <vector>

namespace rt::cdc {

// Who may see which change: the pure half of postgres_changes delivery. Matching a batch of
// changes against the registry's filters tells which RLS questions must be asked of the tenant
// database (one per distinct claims set, never one per subscriber per change); rendering turns
// the answers into one message per group of channels that receive identical bytes.
// Used on the cdc thread; no I/O here.
namespace router {

// One subscriber that a change passed the filters for, with the bindings it matched that share
// one projection (a channel whose bindings select different columns has one per projection).
struct Candidate
{
    const Subscriber *subscriber;
    QList<qint64> ids; // the matched bindings' ids, in binding order
    bool projection = false; // the bindings have a `select`
    QStringList select; // their selected columns
};

struct MatchedChange
{
    Change change;
    std::vector<Candidate> candidates;
};

// A visibility question for one claims set: which of these changes can the role SELECT?
struct VisibilityCheck
{
    QByteArray role;
    QByteArray claimsJson;
    QByteArray sub;
    // relation oid -> indices into Matched::changes (INSERT/UPDATE on RLS-enabled tables only)
    QHash<quint32, QList<int>> changesByRelation;
};

struct Matched
{
    QList<MatchedChange> changes; // only changes with at least one candidate
    QHash<QByteArray, VisibilityCheck> checks; // by claimsJson
    // (role, relation oid) pairs whose column privileges are needed
    QSet<QPair<QByteArray, quint32>> privilegesNeeded;
};

// Matches `changes` (in commit order) against `registry`.
Matched match(const QList<Change> &changes, const SubscriptionRegistry &registry);

// The answers: per claims set the visible change indices, or the error that evaluating them
// raised (reported to those subscribers only).
using Visibility = std::variant<QSet<int>, QString>;
// Per (role, relation oid): the columns the role may SELECT.
using Privileges = QHash<QPair<QByteArray, quint32>, QSet<QByteArray>>;

struct Delivery
{
    pubsub::OutboundMessagePtr message;
    int recipients = 0;
};

// The messages to publish, in change order.
std::vector<Delivery> render(const Matched &matched,
                             const QHash<QByteArray, Visibility> &visibility,
                             const Privileges &privileges,
                             const pubsub::DeliveryCounting &counting);

// The `data` object of a postgres_changes message for one role's view of `change`.
QByteArray renderData(const Change &change, const QSet<QByteArray> &selectable,
                      const QStringList *select);

} // namespace router

} // namespace rt::cdc
