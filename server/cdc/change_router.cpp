#include "server/cdc/change_router.h"

#include "server/cdc/row_filter.h"
#include "server/pgoutput/values.h"
#include "server/postgres/sql_text.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <map>

namespace rt::cdc {

const char *changeTypeName(ChangeType type)
{
    switch (type) {
    case ChangeType::Insert:
        return "INSERT";
    case ChangeType::Update:
        return "UPDATE";
    case ChangeType::Delete:
        return "DELETE";
    }
    return "INSERT";
}

QByteArray RelationInfo::qualifiedName() const
{
    QByteArray name = postgres::quoteIdentifier(schema);
    name.append('.');
    name.append(postgres::quoteIdentifier(table));
    return name;
}

namespace router {

namespace {

bool actionMatches(const QByteArray &action, ChangeType type)
{
    return action == "*" || action == changeTypeName(type);
}

bool sameProjection(const QStringList *a, const QStringList *b)
{
    if (a == nullptr || b == nullptr) {
        return a == b;
    }
    return *a == *b;
}

// The candidate of `entry`'s subscriber for the projection `select`, added if it has none yet.
Candidate &candidateFor(std::vector<Candidate> &candidates,
                        const SubscriptionRegistry::Entry &entry, const QStringList *select)
{
    // The index lists each subscriber's bindings together, so its candidates are the
    // last ones: look back only while they are its own (linear in K, not quadratic).
    for (auto it = candidates.rbegin();
         it != candidates.rend() && it->subscriber == entry.subscriber; ++it) {
        if (sameProjection(it->select, select)) {
            return *it;
        }
    }
    candidates.push_back(Candidate{ entry.subscriber, entry.claimsSet, {}, select });
    return candidates.back();
}

// The subscribers whose bindings on the change's table pass its action and filters.
void addCandidates(std::vector<Candidate> &candidates, const Change &change,
                   const std::vector<SubscriptionRegistry::Entry> &entries)
{
    // Filters see the new row, a DELETE its old key or row (spec §6.5 step 5).
    const bool useOld = change.type == ChangeType::Delete;
    const RowFilterView row(*change.relation, useOld ? change.oldTuple : change.newTuple,
                            useOld ? QList<TupleValue>() : change.oldTuple);
    for (const SubscriptionRegistry::Entry &entry : entries) {
        if (!actionMatches(entry.binding->action, change.type)
            || !row.passes(entry.binding->filters)) {
            continue;
        }
        // One output per distinct selected_columns (spec §6.5 step 4): bindings of one
        // channel with different `select`s each get their own projection and ids.
        const QStringList *select =
                entry.binding->select.has_value() ? &*entry.binding->select : nullptr;
        Candidate &candidate = candidateFor(candidates, entry, select);
        if (!candidate.ids.contains(entry.binding->id)) {
            candidate.ids.append(entry.binding->id);
        }
    }
}

// The questions change `index` raises: its candidates' column privileges and, on an RLS-enabled
// table, the visibility checks of their claims sets.
void recordQuestions(Matched &matched, const Change &change,
                     const std::vector<Candidate> &candidates, int index)
{
    const bool needsRls = change.relation->rlsEnabled && change.type != ChangeType::Delete;
    const QByteArray *lastRole = nullptr;
    for (const Candidate &candidate : candidates) {
        const Subscriber &subscriber = *candidate.subscriber;
        // Subscribers mostly share a handful of roles: insert once per run of one role.
        if (lastRole == nullptr || *lastRole != subscriber.role) {
            matched.privilegesNeeded.insert(qMakePair(subscriber.role, change.relation->oid));
            lastRole = &subscriber.role;
        }
        if (needsRls) {
            VisibilityCheck &check = matched.checks[static_cast<size_t>(candidate.claimsSet)];
            if (check.claimsSet < 0) {
                check.claimsSet = candidate.claimsSet;
                check.role = subscriber.role;
                check.claimsJson = subscriber.claimsJson;
                check.sub = subscriber.sub;
            }
            QList<int> &indices = check.changesByRelation[change.relation->oid];
            if (indices.isEmpty() || indices.last() != index) {
                indices.append(index);
            }
        }
    }
}

} // namespace

qsizetype Matched::checkCount() const
{
    return std::count_if(checks.cbegin(), checks.cend(),
                         [](const VisibilityCheck &check) { return check.claimsSet >= 0; });
}

const VisibilityCheck *Matched::checkFor(const QByteArray &claimsJson) const
{
    for (const VisibilityCheck &check : checks) {
        if (check.claimsSet >= 0 && check.claimsJson == claimsJson) {
            return &check;
        }
    }
    return nullptr;
}

Matched match(const QList<Change> &changes, const SubscriptionRegistry &registry)
{
    // Per change the work is linear in its candidates and touches no string hashing per
    // candidate: with K unfiltered subscribers every change has K candidates.
    Matched matched;
    matched.registry = registry.snapshot();
    matched.checks.resize(static_cast<size_t>(matched.registry->claimsSetCount));
    for (int source = 0; source < changes.size(); ++source) {
        const Change &change = changes[source];
        const std::vector<SubscriptionRegistry::Entry> *entries =
                matched.registry->bindingsOn(change.relation->schema, change.relation->table);
        if (entries == nullptr) {
            continue;
        }
        MatchedChange current{ change, {}, source };
        addCandidates(current.candidates, change, *entries);
        if (current.candidates.empty()) {
            continue;
        }
        recordQuestions(matched, change, current.candidates,
                        static_cast<int>(matched.changes.size()));
        matched.changes.append(std::move(current));
    }
    return matched;
}

namespace {

QJsonObject tupleObject(const RelationInfo &relation, const QList<TupleValue> &tuple,
                        const QList<TupleValue> &fallback, const QSet<QByteArray> &columns,
                        bool keysOnly)
{
    QJsonObject object;
    for (qsizetype i = 0; i < relation.columns.size() && i < tuple.size(); ++i) {
        const ColumnInfo &column = relation.columns[i];
        if (!columns.contains(column.name) || (keysOnly && !column.isPrimaryKey)) {
            continue;
        }
        const TupleValue *value = &tuple[i];
        if (value->kind == TupleValue::Kind::UnchangedToast) {
            // Unchanged TOAST values are not in the new tuple: take the old row's when known.
            if (i < fallback.size() && fallback[i].kind == TupleValue::Kind::Text) {
                value = &fallback[i];
            } else {
                continue;
            }
        }
        const QString name = QString::fromUtf8(column.name);
        if (value->kind == TupleValue::Kind::Null) {
            object.insert(name, QJsonValue::Null);
        } else {
            object.insert(name, pgoutput::jsonValue(column.typeName, value->text));
        }
    }
    return object;
}

QByteArray errorData(const Change &change, const QString &error)
{
    QJsonObject data;
    data.insert(QLatin1String("schema"), QString::fromUtf8(change.relation->schema));
    data.insert(QLatin1String("table"), QString::fromUtf8(change.relation->table));
    data.insert(QLatin1String("type"), QLatin1String(changeTypeName(change.type)));
    data.insert(QLatin1String("commit_timestamp"), QJsonValue::Null);
    data.insert(QLatin1String("columns"), QJsonArray());
    if (change.type != ChangeType::Delete) {
        data.insert(QLatin1String("record"), QJsonObject());
    }
    if (change.type != ChangeType::Insert) {
        data.insert(QLatin1String("old_record"), QJsonObject());
    }
    data.insert(QLatin1String("errors"), QJsonArray{ error });
    return QJsonDocument(data).toJson(QJsonDocument::Compact);
}

} // namespace

QByteArray renderData(const Change &change, const QSet<QByteArray> &selectable,
                      const QStringList *select)
{
    const RelationInfo &relation = *change.relation;
    QSet<QByteArray> shown;
    QJsonArray columns;
    for (const ColumnInfo &column : relation.columns) {
        if (!selectable.contains(column.name)) {
            continue;
        }
        if (select != nullptr && !column.isPrimaryKey
            && !select->contains(QString::fromUtf8(column.name))) {
            continue;
        }
        shown.insert(column.name);
        QJsonObject entry;
        entry.insert(QLatin1String("name"), QString::fromUtf8(column.name));
        entry.insert(QLatin1String("type"), QString::fromUtf8(column.typeName));
        columns.append(entry);
    }
    QJsonObject data;
    data.insert(QLatin1String("schema"), QString::fromUtf8(relation.schema));
    data.insert(QLatin1String("table"), QString::fromUtf8(relation.table));
    data.insert(QLatin1String("commit_timestamp"), QString::fromLatin1(change.commitTimestamp));
    data.insert(QLatin1String("type"), QLatin1String(changeTypeName(change.type)));
    data.insert(QLatin1String("columns"), columns);
    switch (change.type) {
    case ChangeType::Insert:
        data.insert(QLatin1String("record"),
                    tupleObject(relation, change.newTuple, {}, shown, false));
        break;
    case ChangeType::Update: {
        data.insert(QLatin1String("record"),
                    tupleObject(relation, change.newTuple, change.oldTuple, shown, false));
        // Without an old row (default replica identity) the key is the new row's primary key.
        const bool hasOld = !change.oldTuple.isEmpty();
        data.insert(QLatin1String("old_record"),
                    tupleObject(relation, hasOld ? change.oldTuple : change.newTuple, {}, shown,
                                !hasOld || !change.oldIsFullRow));
        break;
    }
    case ChangeType::Delete:
        // With RLS on, a DELETE shows its primary key only: nobody checked the old row's
        // visibility (spec §6.5).
        data.insert(QLatin1String("old_record"),
                    tupleObject(relation, change.oldTuple, {}, shown,
                                !change.oldIsFullRow || relation.rlsEnabled));
        break;
    }
    data.insert(QLatin1String("errors"), QJsonValue::Null);
    return QJsonDocument(data).toJson(QJsonDocument::Compact);
}

namespace {

using DataCache = QHash<QPair<QByteArray, const QStringList *>, QByteArray>;
using Groups = std::map<std::tuple<QByteArray, bool, QByteArray, QByteArray>,
                        std::pair<pubsub::TopicKey, std::vector<quint64>>>;

// Whether the RLS answer for `candidate`'s claims set lets it see change `index`; an error
// answer is shown to it, as `data`.
bool rlsShows(const Visibilities &visibility, const Candidate &candidate, int index,
              const Change &change, QByteArray &data)
{
    const auto claimsSet = static_cast<size_t>(candidate.claimsSet);
    if (claimsSet >= visibility.size()) {
        return false;
    }
    const Visibility &answer = visibility[claimsSet];
    if (const QString *error = std::get_if<QString>(&answer)) {
        data = errorData(change, *error);
        return true;
    }
    const QSet<int> *visible = std::get_if<QSet<int>>(&answer);
    return visible != nullptr && visible->contains(index); // false: unanswered, or not visible
}

bool keysSelectable(const RelationInfo &relation, const QSet<QByteArray> &selectable)
{
    for (const ColumnInfo &column : relation.columns) {
        if (column.isPrimaryKey && !selectable.contains(column.name)) {
            return false;
        }
    }
    return true;
}

// The data `candidate` gets by its role's privileges: the change as it may see it, or the error
// that stands for it.
QByteArray privilegedData(const Change &change, const Candidate &candidate,
                          const Privileges &privileges, DataCache &dataCache)
{
    const RelationInfo &relation = *change.relation;
    const Subscriber &subscriber = *candidate.subscriber;
    const QSet<QByteArray> selectable = privileges.value(qMakePair(subscriber.role, relation.oid));
    if (change.type != ChangeType::Delete && !relation.hasPrimaryKey()) {
        return errorData(change, QStringLiteral("Error 400: Bad Request, no primary key"));
    }
    if (change.type != ChangeType::Delete && !keysSelectable(relation, selectable)) {
        return errorData(change, QStringLiteral("Error 401: Unauthorized"));
    }
    // By the binding's own list: equal lists of different bindings render twice, to the same
    // bytes (joinGroup still merges them).
    const auto cacheKey = qMakePair(subscriber.role, candidate.select);
    auto cached = dataCache.constFind(cacheKey);
    if (cached == dataCache.constEnd()) {
        cached = dataCache.insert(cacheKey, renderData(change, selectable, candidate.select));
    }
    return cached.value();
}

// Adds `candidate`'s subscriber to the group of channels that receive `data` with its ids.
void joinGroup(Groups &groups, const Candidate &candidate, const QByteArray &data)
{
    const Subscriber &subscriber = *candidate.subscriber;
    QByteArray ids;
    for (const qint64 id : candidate.ids) {
        ids.append(QByteArray::number(id)).append(',');
    }
    auto &group = groups[std::make_tuple(subscriber.topic.id(), subscriber.legacy, ids, data)];
    group.first = subscriber.topic;
    group.second.push_back(subscriber.memberId);
}

// One message per group, to its members.
void deliverGroups(std::vector<Delivery> &deliveries, int changeIndex, const Change &change,
                   Groups &groups, const pubsub::DeliveryCounting &counting)
{
    for (auto &[key, group] : groups) {
        const bool legacy = std::get<1>(key);
        const QByteArray &ids = std::get<2>(key);
        const QByteArray &data = std::get<3>(key);
        std::sort(group.second.begin(), group.second.end());
        QByteArray payload;
        QByteArray event;
        if (legacy) {
            event = changeTypeName(change.type);
            payload = data;
        } else {
            event = QByteArrayLiteral("postgres_changes");
            payload = "{\"ids\":[" + ids.chopped(1) + "],\"data\":" + data + '}';
        }
        const int recipients = static_cast<int>(group.second.size());
        deliveries.push_back(
                Delivery{ pubsub::OutboundMessage::pushTo(group.first, event, payload,
                                                          std::move(group.second), counting),
                          recipients, changeIndex });
    }
}

} // namespace

std::vector<Delivery> render(const Matched &matched, const Visibilities &visibility,
                             const Privileges &privileges, const pubsub::DeliveryCounting &counting)
{
    std::vector<Delivery> deliveries;
    for (int index = 0; index < matched.changes.size(); ++index) {
        const MatchedChange &current = matched.changes[index];
        const Change &change = current.change;
        const bool needsRls = change.relation->rlsEnabled && change.type != ChangeType::Delete;
        // data bytes per (role, projection): most subscribers share one rendering.
        DataCache dataCache;
        // (topic, legacy, ids, data) -> members: channels that receive identical bytes.
        Groups groups;
        for (const Candidate &candidate : current.candidates) {
            QByteArray data;
            if (needsRls && !rlsShows(visibility, candidate, index, change, data)) {
                continue;
            }
            if (data.isEmpty()) {
                data = privilegedData(change, candidate, privileges, dataCache);
            }
            joinGroup(groups, candidate, data);
        }
        deliverGroups(deliveries, current.sourceIndex, change, groups, counting);
    }
    return deliveries;
}

} // namespace router

} // namespace rt::cdc
