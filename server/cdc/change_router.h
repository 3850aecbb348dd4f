#pragma once

#include "server/cdc/change.h"
#include "server/cdc/subscription_registry.h"
#include "server/pubsub/outbound_message.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QSet>
#include <QString>
#include <QVarLengthArray>

#include <memory>
#include <variant>
#include <vector>

namespace rt::cdc::router {

// One subscriber that a change passed the filters for, with the bindings it matched that share
// one projection (a channel whose bindings select different columns has one per projection).
struct Candidate
{
    const Subscriber *subscriber; // kept alive by Matched::registry
    int claimsSet = 0; // its RLS identity (SubscriptionRegistry::Entry::claimsSet)
    QVarLengthArray<qint64, 2> ids; // the matched bindings' ids, in binding order
    const QStringList *select = nullptr; // the bindings' selected columns; nullptr: all
};

struct MatchedChange
{
    Change change;
    std::vector<Candidate> candidates;
    int sourceIndex = 0; // in the list given to match(): its place in the WAL
};

// A visibility question for one claims set: which of these changes can the role SELECT?
struct VisibilityCheck
{
    int claimsSet = -1; // -1: nothing to ask for this claims set
    QByteArray role;
    QByteArray claimsJson;
    QByteArray sub;
    // relation oid -> indices into Matched::changes (INSERT/UPDATE on RLS-enabled tables only)
    QHash<quint32, QList<int>> changesByRelation;
};

struct Matched
{
    // The registry as matched: keeps the candidates' subscribers alive while the batch is
    // evaluated, whatever joins and leaves meanwhile.
    std::shared_ptr<const SubscriptionRegistry::Snapshot> registry;
    QList<MatchedChange> changes; // only changes with at least one candidate
    // Indexed by claims set; those with claimsSet == -1 ask nothing.
    std::vector<VisibilityCheck> checks;
    // (role, relation oid) pairs whose column privileges are needed
    QSet<QPair<QByteArray, quint32>> privilegesNeeded;

    // The number of questions to ask, and the one for `claimsJson` (nullptr: none).
    qsizetype checkCount() const;
    const VisibilityCheck *checkFor(const QByteArray &claimsJson) const;
};

// Matches `changes` (in commit order) against the registry's current snapshot.
Matched match(const QList<Change> &changes, const SubscriptionRegistry &registry);

// The answer for one claims set: the visible change indices, or the error that evaluating them
// raised (reported to those subscribers only); monostate while unanswered (nothing delivered).
using Visibility = std::variant<std::monostate, QSet<int>, QString>;
// Indexed by claims set, like Matched::checks.
using Visibilities = std::vector<Visibility>;
// Per (role, relation oid): the columns the role may SELECT.
using Privileges = QHash<QPair<QByteArray, quint32>, QSet<QByteArray>>;

struct Delivery
{
    pubsub::OutboundMessagePtr message;
    int recipients = 0;
    // The change's index in the list given to match(): one change's deliveries of a topic are
    // adjacent, and changes come in WAL order.
    int change = 0;
};

// The messages to publish, in change order.
std::vector<Delivery> render(const Matched &matched, const Visibilities &visibility,
                             const Privileges &privileges,
                             const pubsub::DeliveryCounting &counting);

// The `data` object of a postgres_changes message for one role's view of `change`.
QByteArray renderData(const Change &change, const QSet<QByteArray> &selectable,
                      const QStringList *select);

} // namespace rt::cdc::router
