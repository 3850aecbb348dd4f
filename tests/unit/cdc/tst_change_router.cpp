// The pure half of postgres_changes delivery (server/cdc/change_router): which channels a change
// matches, which RLS questions that raises (one per distinct claims set), and the payloads each
// channel receives once the answers are in (spec §6.5, §6.6).
// JSON keys are spelled as plain literals in this test: allow their conversion to QString.
#undef QT_NO_CAST_FROM_ASCII

#include "server/cdc/change_router.h"
#include "server/subscriptions/filter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace rt::cdc;
using rt::protocol::Vsn;
using rt::pubsub::TopicKey;

namespace {

const QByteArray Tenant = QByteArrayLiteral("t1");

RelationPtr todos(bool rls = false, bool withKey = true)
{
    auto relation = std::make_shared<RelationInfo>();
    relation->oid = 1234;
    relation->schema = "public";
    relation->table = "todos";
    relation->rlsEnabled = rls;
    relation->catalogKnown = true;
    relation->columns = {
        ColumnInfo{ "id", "int4", 23, withKey, "integer" },
        ColumnInfo{ "title", "text", 25, false, "text" },
        ColumnInfo{ "done", "bool", 16, false, "boolean" },
        ColumnInfo{ "meta", "jsonb", 3802, false, "jsonb" },
    };
    return relation;
}

TupleValue text(const char *value)
{
    return TupleValue{ TupleValue::Kind::Text, QByteArray(value) };
}
TupleValue null()
{
    return TupleValue{ TupleValue::Kind::Null, {} };
}

Change insert(const RelationPtr &relation, const char *id, const char *title = "a")
{
    Change change;
    change.relation = relation;
    change.type = ChangeType::Insert;
    change.commitTimestamp = "2024-05-01T10:00:00.123Z";
    change.newTuple = { text(id), text(title), text("t"), text("{\"k\": [1, 2]}") };
    return change;
}

Subscriber subscriber(quint64 member, const QByteArray &sub, const QByteArray &action = "*",
                      const QString &filter = {}, const QByteArray &room = "room")
{
    Subscriber s;
    s.memberId = member;
    s.topic = TopicKey(Tenant, false, room);
    s.role = "authenticated";
    s.sub = sub;
    s.claimsJson = "{\"role\":\"authenticated\",\"sub\":\"" + sub + "\"}";
    Binding binding;
    binding.subscriptionId = QUuid::createUuid();
    binding.id = 1000 + static_cast<qint64>(member);
    binding.schema = "public";
    binding.table = "todos";
    binding.action = action;
    if (!filter.isEmpty()) {
        binding.filters = rt::subscriptions::parseFilter(filter).value();
    }
    s.bindings = { binding };
    return s;
}

const router::Privileges AllColumns{ { qMakePair(QByteArray("authenticated"), quint32(1234)),
                                       { "id", "title", "done", "meta" } } };

// The payload object of a delivered message, as a V1 client would read it.
QJsonObject payloadOf(const router::Delivery &delivery)
{
    const QByteArray bytes = delivery.message->frameFor(Vsn::V2).bytes;
    return QJsonDocument::fromJson(bytes).array().at(4).toObject();
}

QByteArray eventOf(const router::Delivery &delivery)
{
    const QByteArray bytes = delivery.message->frameFor(Vsn::V2).bytes;
    return QJsonDocument::fromJson(bytes).array().at(3).toString().toUtf8();
}

QList<qint64> idsOf(const router::Candidate &candidate)
{
    return QList<qint64>(candidate.ids.cbegin(), candidate.ids.cend());
}

// The database's answers, given per claims set as the subscribers' claims JSON.
router::Visibilities answers(const router::Matched &matched,
                             const QList<QPair<QByteArray, router::Visibility>> &byClaims)
{
    router::Visibilities visibility(matched.checks.size());
    for (const auto &[claimsJson, answer] : byClaims) {
        if (const router::VisibilityCheck *check = matched.checkFor(claimsJson)) {
            visibility[static_cast<size_t>(check->claimsSet)] = answer;
        }
    }
    return visibility;
}

} // namespace

class ChangeRouterTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void filtersAndEventsSelectCandidates();
    void payloadIsTypedAndSharedByIdenticalChannels();
    void rowLevelSecurityAsksOncePerClaimsSet();
    void unansweredClaimsSetsReceiveNothing();
    void aMatchedBatchOutlivesLeavingSubscribers();
    void anRlsErrorReachesOnlyItsSubscribers();
    void columnsTheRoleCannotSelectAreRemoved();
    void missingOrHiddenPrimaryKeyIsReportedAsError();
    void deleteShowsTheKeyWithoutAsking();
    void updateWithoutOldRowUsesTheNewKey();
    void selectKeepsThePrimaryKey();
    void legacyChannelsGetTheBareChange();
    void eachSelectOfAChannelGetsItsOwnProjection();
};

void ChangeRouterTest::filtersAndEventsSelectCandidates()
{
    SubscriptionRegistry registry;
    registry.add(subscriber(1, "u1", "INSERT", QStringLiteral("id=eq.1")));
    registry.add(subscriber(2, "u2", "UPDATE"));
    registry.add(subscriber(3, "u3", "*", QStringLiteral("title=not.eq.a")));
    const RelationPtr relation = todos();

    router::Matched matched =
            router::match({ insert(relation, "1"), insert(relation, "2") }, registry);
    // id=1: member 1 (filter matches); member 2 wants updates only; member 3 excludes title a.
    QCOMPARE(matched.changes.size(), 1);
    QCOMPARE(matched.changes[0].candidates.size(), std::size_t(1));
    QCOMPARE(matched.changes[0].candidates[0].subscriber->memberId, quint64(1));
    QCOMPARE(idsOf(matched.changes[0].candidates[0]), QList<qint64>{ 1001 });
    QCOMPARE(matched.checkCount(), 0); // no RLS on the table: nothing to ask

    matched = router::match({ insert(relation, "3", "b") }, registry);
    QCOMPARE(matched.changes.size(), 1);
    QCOMPARE(matched.changes[0].candidates[0].subscriber->memberId, quint64(3));
}

void ChangeRouterTest::payloadIsTypedAndSharedByIdenticalChannels()
{
    SubscriptionRegistry registry;
    Subscriber first = subscriber(1, "u1");
    Subscriber second = subscriber(2, "u1");
    second.bindings[0].id = first.bindings[0].id; // identical bindings: identical ids
    registry.add(first);
    registry.add(second);
    const router::Matched matched = router::match({ insert(todos(), "7", "x") }, registry);
    const auto deliveries = router::render(matched, {}, AllColumns, {});
    QCOMPARE(deliveries.size(), std::size_t(1));
    QCOMPARE(deliveries[0].recipients, 2);
    QVERIFY(deliveries[0].message->isAddressedTo(1));
    QVERIFY(deliveries[0].message->isAddressedTo(2));
    QCOMPARE(eventOf(deliveries[0]), QByteArray("postgres_changes"));
    const QJsonObject payload = payloadOf(deliveries[0]);
    QCOMPARE(payload.value("ids").toArray(), QJsonArray{ 1001 });
    const QJsonObject data = payload.value("data").toObject();
    QCOMPARE(data.value("schema").toString(), QStringLiteral("public"));
    QCOMPARE(data.value("table").toString(), QStringLiteral("todos"));
    QCOMPARE(data.value("type").toString(), QStringLiteral("INSERT"));
    QCOMPARE(data.value("commit_timestamp").toString(), QStringLiteral("2024-05-01T10:00:00.123Z"));
    QVERIFY(data.value("errors").isNull());
    QVERIFY(!data.contains("old_record"));
    const QJsonObject record = data.value("record").toObject();
    QCOMPARE(record.value("id"), QJsonValue(7));
    QCOMPARE(record.value("title"), QJsonValue(QStringLiteral("x")));
    QCOMPARE(record.value("done"), QJsonValue(true));
    QCOMPARE(record.value("meta").toObject().value("k").toArray(), (QJsonArray{ 1, 2 }));
    const QJsonArray columns = data.value("columns").toArray();
    QCOMPARE(columns.size(), 4);
    QCOMPARE(columns[0].toObject().value("name").toString(), QStringLiteral("id"));
    QCOMPARE(columns[0].toObject().value("type").toString(), QStringLiteral("int4"));
}

void ChangeRouterTest::rowLevelSecurityAsksOncePerClaimsSet()
{
    SubscriptionRegistry registry;
    registry.add(subscriber(1, "alice"));
    registry.add(subscriber(2, "bob"));
    Subscriber aliceAgain = subscriber(3, "alice");
    registry.add(aliceAgain);
    const RelationPtr relation = todos(true);
    const router::Matched matched = router::match(
            { insert(relation, "1"), insert(relation, "2"), insert(relation, "3") }, registry);
    // Three subscribers, three changes, two distinct claims sets: two questions.
    QCOMPARE(matched.checkCount(), 2);
    QVERIFY(matched.checkFor("{\"role\":\"authenticated\",\"sub\":\"alice\"}") != nullptr);
    const router::VisibilityCheck &alice =
            *matched.checkFor("{\"role\":\"authenticated\",\"sub\":\"alice\"}");
    QCOMPARE(alice.role, QByteArray("authenticated"));
    QCOMPARE(alice.sub, QByteArray("alice"));
    QCOMPARE(alice.changesByRelation.value(1234), (QList<int>{ 0, 1, 2 }));

    // Alice may see rows 0 and 2, Bob row 1.
    const router::Visibilities visibility =
            answers(matched,
                    { { "{\"role\":\"authenticated\",\"sub\":\"alice\"}", QSet<int>{ 0, 2 } },
                      { "{\"role\":\"authenticated\",\"sub\":\"bob\"}", QSet<int>{ 1 } } });
    const auto deliveries = router::render(matched, visibility, AllColumns, {});
    QMap<int, QList<quint64>> recipientsById; // record id -> members
    for (const router::Delivery &delivery : deliveries) {
        const int id = payloadOf(delivery)
                               .value("data")
                               .toObject()
                               .value("record")
                               .toObject()
                               .value("id")
                               .toInt();
        for (quint64 member : { 1, 2, 3 }) {
            if (delivery.message->isAddressedTo(member)) {
                recipientsById[id].append(member);
            }
        }
    }
    QCOMPARE(recipientsById.value(1), (QList<quint64>{ 1, 3 }));
    QCOMPARE(recipientsById.value(2), (QList<quint64>{ 2 }));
    QCOMPARE(recipientsById.value(3), (QList<quint64>{ 1, 3 }));
}

void ChangeRouterTest::unansweredClaimsSetsReceiveNothing()
{
    SubscriptionRegistry registry;
    registry.add(subscriber(1, "alice"));
    registry.add(subscriber(2, "bob"));
    const router::Matched matched = router::match({ insert(todos(true), "1") }, registry);
    QCOMPARE(matched.checkCount(), 2);
    // Bob's question was never answered (e.g. the batch was cut short): no delivery to him.
    const auto deliveries = router::render(
            matched,
            answers(matched,
                    { { "{\"role\":\"authenticated\",\"sub\":\"alice\"}", QSet<int>{ 0 } } }),
            AllColumns, {});
    QCOMPARE(deliveries.size(), std::size_t(1));
    QVERIFY(deliveries[0].message->isAddressedTo(1));
    QVERIFY(!deliveries[0].message->isAddressedTo(2));
    QVERIFY(router::render(matched, {}, AllColumns, {}).empty());
}

void ChangeRouterTest::aMatchedBatchOutlivesLeavingSubscribers()
{
    // The RLS questions of a batch take a while; channels leave and refresh tokens meanwhile.
    // The batch keeps what it matched (under ASan a dangling subscriber would be reported).
    SubscriptionRegistry registry;
    registry.add(subscriber(1, "alice", "*", {}, "room-a"));
    registry.add(subscriber(2, "bob", "*", {}, "room-b"));
    const router::Matched matched = router::match({ insert(todos(), "1") }, registry);
    registry.remove(1);
    registry.add(subscriber(2, "bob-refreshed", "*", {}, "room-b"));
    registry.add(subscriber(3, "carol", "*", {}, "room-c"));
    const auto deliveries = router::render(matched, {}, AllColumns, {});
    QCOMPARE(deliveries.size(), std::size_t(2));
    QVERIFY(deliveries[0].message->isAddressedTo(1) || deliveries[1].message->isAddressedTo(1));
    QVERIFY(deliveries[0].message->isAddressedTo(2) || deliveries[1].message->isAddressedTo(2));
    // The next batch sees the registry as it is now.
    const router::Matched next = router::match({ insert(todos(), "2") }, registry);
    QCOMPARE(next.changes[0].candidates.size(), std::size_t(2));
    QCOMPARE(next.changes[0].candidates[0].subscriber->sub.startsWith("bob")
                     || next.changes[0].candidates[0].subscriber->sub == "carol",
             true);
}

void ChangeRouterTest::anRlsErrorReachesOnlyItsSubscribers()
{
    SubscriptionRegistry registry;
    registry.add(subscriber(1, "good"));
    registry.add(subscriber(2, "broken"));
    const router::Matched matched = router::match({ insert(todos(true), "1") }, registry);
    const router::Visibilities visibility =
            answers(matched,
                    { { "{\"role\":\"authenticated\",\"sub\":\"good\"}", QSet<int>{ 0 } },
                      { "{\"role\":\"authenticated\",\"sub\":\"broken\"}",
                        QStringLiteral("invalid input syntax for type uuid") } });
    const auto deliveries = router::render(matched, visibility, AllColumns, {});
    QCOMPARE(deliveries.size(), std::size_t(2));
    for (const router::Delivery &delivery : deliveries) {
        const QJsonObject data = payloadOf(delivery).value("data").toObject();
        if (delivery.message->isAddressedTo(1)) {
            QVERIFY(data.value("errors").isNull());
            QCOMPARE(data.value("record").toObject().value("id"), QJsonValue(1));
        } else {
            QVERIFY(delivery.message->isAddressedTo(2));
            QCOMPARE(data.value("errors").toArray(),
                     QJsonArray{ QStringLiteral("invalid input syntax for type uuid") });
            QCOMPARE(data.value("record").toObject(), QJsonObject());
        }
    }
}

void ChangeRouterTest::columnsTheRoleCannotSelectAreRemoved()
{
    SubscriptionRegistry registry;
    registry.add(subscriber(1, "u"));
    const router::Matched matched = router::match({ insert(todos(), "1") }, registry);
    const router::Privileges privileges{ { qMakePair(QByteArray("authenticated"), quint32(1234)),
                                           { "id", "title" } } };
    const auto deliveries = router::render(matched, {}, privileges, {});
    const QJsonObject data = payloadOf(deliveries.at(0)).value("data").toObject();
    QCOMPARE(data.value("record").toObject().keys(), (QStringList{ "id", "title" }));
    QCOMPARE(data.value("columns").toArray().size(), 2);
}

void ChangeRouterTest::missingOrHiddenPrimaryKeyIsReportedAsError()
{
    SubscriptionRegistry registry;
    registry.add(subscriber(1, "u"));
    auto deliveries = router::render(router::match({ insert(todos(false, false), "1") }, registry),
                                     {}, AllColumns, {});
    QJsonObject data = payloadOf(deliveries.at(0)).value("data").toObject();
    QCOMPARE(data.value("errors").toArray(),
             QJsonArray{ QStringLiteral("Error 400: Bad Request, no primary key") });
    QVERIFY(data.value("commit_timestamp").isNull());
    QCOMPARE(data.value("columns").toArray(), QJsonArray());

    const router::Privileges noKey{ { qMakePair(QByteArray("authenticated"), quint32(1234)),
                                      { "title" } } };
    deliveries = router::render(router::match({ insert(todos(), "1") }, registry), {}, noKey, {});
    data = payloadOf(deliveries.at(0)).value("data").toObject();
    QCOMPARE(data.value("errors").toArray(),
             QJsonArray{ QStringLiteral("Error 401: Unauthorized") });
}

void ChangeRouterTest::deleteShowsTheKeyWithoutAsking()
{
    SubscriptionRegistry registry;
    registry.add(subscriber(1, "u", "DELETE"));
    Change removed;
    removed.relation = todos(true);
    removed.type = ChangeType::Delete;
    removed.commitTimestamp = "2024-05-01T10:00:00.000Z";
    removed.oldTuple = { text("5"), text("secret"), text("f"), null() };
    removed.oldIsFullRow = true; // REPLICA IDENTITY FULL, but RLS is on: key only
    const router::Matched matched = router::match({ removed }, registry);
    QCOMPARE(matched.checkCount(), 0); // DELETE is never checked against RLS
    const auto deliveries = router::render(matched, {}, AllColumns, {});
    const QJsonObject data = payloadOf(deliveries.at(0)).value("data").toObject();
    QCOMPARE(data.value("old_record").toObject(), (QJsonObject{ { "id", 5 } }));
    QVERIFY(!data.contains("record"));

    // Without RLS the full old row shows.
    removed.relation = todos(false);
    const auto open = router::render(router::match({ removed }, registry), {}, AllColumns, {});
    QCOMPARE(payloadOf(open.at(0)).value("data").toObject().value("old_record").toObject().size(),
             4);
}

void ChangeRouterTest::updateWithoutOldRowUsesTheNewKey()
{
    SubscriptionRegistry registry;
    registry.add(subscriber(1, "u"));
    Change update = insert(todos(), "9", "new");
    update.type = ChangeType::Update;
    const auto deliveries = router::render(router::match({ update }, registry), {}, AllColumns, {});
    const QJsonObject data = payloadOf(deliveries.at(0)).value("data").toObject();
    QCOMPARE(data.value("old_record").toObject(), (QJsonObject{ { "id", 9 } }));
    QCOMPARE(data.value("record").toObject().value("title"), QJsonValue(QStringLiteral("new")));
}

void ChangeRouterTest::selectKeepsThePrimaryKey()
{
    SubscriptionRegistry registry;
    Subscriber s = subscriber(1, "u");
    s.bindings[0].select = QStringList{ QStringLiteral("title") };
    registry.add(s);
    const auto deliveries =
            router::render(router::match({ insert(todos(), "1") }, registry), {}, AllColumns, {});
    const QJsonObject data = payloadOf(deliveries.at(0)).value("data").toObject();
    QCOMPARE(data.value("record").toObject().keys(), (QStringList{ "id", "title" }));
}

void ChangeRouterTest::legacyChannelsGetTheBareChange()
{
    SubscriptionRegistry registry;
    Subscriber s = subscriber(1, "u");
    s.legacy = true;
    registry.add(s);
    const auto deliveries =
            router::render(router::match({ insert(todos(), "1") }, registry), {}, AllColumns, {});
    QCOMPARE(eventOf(deliveries.at(0)), QByteArray("INSERT"));
    const QJsonObject payload = payloadOf(deliveries.at(0));
    QVERIFY(!payload.contains("ids"));
    QCOMPARE(payload.value("type").toString(), QStringLiteral("INSERT"));
}

void ChangeRouterTest::eachSelectOfAChannelGetsItsOwnProjection()
{
    SubscriptionRegistry registry;
    Subscriber s = subscriber(1, "u");
    Binding second = s.bindings[0];
    s.bindings[0].select = QStringList{ QStringLiteral("title") };
    second.id = 2222;
    second.select = QStringList{ QStringLiteral("done") };
    s.bindings.append(second);
    registry.add(s);
    const auto deliveries =
            router::render(router::match({ insert(todos(), "1") }, registry), {}, AllColumns, {});
    QCOMPARE(deliveries.size(), std::size_t(2));
    QMap<qint64, QStringList> keysById;
    for (const router::Delivery &delivery : deliveries) {
        const QJsonObject payload = payloadOf(delivery);
        const QJsonArray ids = payload.value("ids").toArray();
        QCOMPARE(ids.size(), 1);
        keysById.insert(ids[0].toInteger(),
                        payload.value("data").toObject().value("record").toObject().keys());
    }
    QCOMPARE(keysById.value(1001), (QStringList{ "id", "title" }));
    QCOMPARE(keysById.value(2222), (QStringList{ "done", "id" }));
}

QTEST_GUILESS_MAIN(ChangeRouterTest)
#include "tst_change_router.moc"
