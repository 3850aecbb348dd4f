#include "server/presence/topic_presence.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using rt::presence::PresenceDiff;
using rt::presence::TopicPresence;

namespace {

QJsonObject object(QByteArrayView json)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(json.toByteArray(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        qWarning("not a JSON object: %s", json.toByteArray().constData());
    }
    return document.object();
}

// The metas of `key` in a presence_state or in one side of a presence_diff.
QJsonArray metasOf(const QJsonObject &grouped, const QString &key)
{
    return grouped.value(key).toObject().value(QLatin1String("metas")).toArray();
}

} // namespace

// Tests the pure presence state of one topic against spec/server-protocol.md §5 and
// spec/client-protocol.md §9: joins, updates with phx_ref_prev, no-op re-tracks, leaves, the
// presence_state grouping and that refs chosen by a client are never echoed.
class TopicPresenceTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void firstTrackIsAJoin();
    void identicalTrackIsANoOp();
    void changedMetaIsALeaveAndAJoinWithPreviousRef();
    void changedKeyLeavesTheOldKey();
    void untrackIsALeaveOfTheCurrentMeta();
    void untrackOfAnUntrackedMemberIsEmpty();
    void clientSuppliedRefsAreIgnored_data();
    void clientSuppliedRefsAreIgnored();
    void stateGroupsByKeyInTrackingOrder();
    void stateOfManyMembersKeepsTrackingOrder();
    void stateOfAnEmptyTopicIsAnEmptyObject();
    void diffJsonGroupsEntriesByKey();
    void emptyDiffJsonHasBothSides();
};

void TopicPresenceTest::firstTrackIsAJoin()
{
    TopicPresence presence;
    const PresenceDiff diff = presence.track(1, "user-1", object(R"({"name":"Ann"})"), "ref-1");

    QCOMPARE(diff.isEmpty(), false);
    QCOMPARE(object(diff.toJson()),
             object(R"({"joins":{"user-1":{"metas":[{"name":"Ann","phx_ref":"ref-1"}]}},)"
                    R"("leaves":{}})"));
    QVERIFY(presence.isTracked(1));
    QCOMPARE(presence.size(), 1);
    QCOMPARE(object(presence.stateJson()),
             object(R"({"user-1":{"metas":[{"name":"Ann","phx_ref":"ref-1"}]}})"));
}

void TopicPresenceTest::identicalTrackIsANoOp()
{
    TopicPresence presence;
    presence.track(1, "user-1", object(R"({"name":"Ann","n":1})"), "ref-1");
    // Same content, keys in another order: still identical.
    const PresenceDiff diff =
            presence.track(1, "user-1", object(R"({"n":1,"name":"Ann"})"), "ref-2");

    QVERIFY(diff.isEmpty());
    QVERIFY(diff.joins.isEmpty());
    QVERIFY(diff.leaves.isEmpty());
    // The tracked meta keeps its original ref.
    QCOMPARE(object(presence.stateJson()),
             object(R"({"user-1":{"metas":[{"n":1,"name":"Ann","phx_ref":"ref-1"}]}})"));
}

void TopicPresenceTest::changedMetaIsALeaveAndAJoinWithPreviousRef()
{
    TopicPresence presence;
    presence.track(1, "user-1", object(R"({"name":"Ann"})"), "ref-1");
    const PresenceDiff diff = presence.track(1, "user-1", object(R"({"name":"Ann2"})"), "ref-2");

    QCOMPARE(object(diff.toJson()),
             object(R"({"joins":{"user-1":{"metas":[{"name":"Ann2","phx_ref":"ref-2",)"
                    R"("phx_ref_prev":"ref-1"}]}},)"
                    R"("leaves":{"user-1":{"metas":[{"name":"Ann","phx_ref":"ref-1"}]}}})"));
    QCOMPARE(presence.size(), 1);
    // presence_state carries the current meta only, without phx_ref_prev.
    QCOMPARE(object(presence.stateJson()),
             object(R"({"user-1":{"metas":[{"name":"Ann2","phx_ref":"ref-2"}]}})"));

    // A further update refers to the ref of the previous update.
    const PresenceDiff again = presence.track(1, "user-1", object(R"({"name":"Ann3"})"), "ref-3");
    QCOMPARE(object(again.toJson()),
             object(R"({"joins":{"user-1":{"metas":[{"name":"Ann3","phx_ref":"ref-3",)"
                    R"("phx_ref_prev":"ref-2"}]}},)"
                    R"("leaves":{"user-1":{"metas":[{"name":"Ann2","phx_ref":"ref-2"}]}}})"));
}

void TopicPresenceTest::changedKeyLeavesTheOldKey()
{
    TopicPresence presence;
    presence.track(7, "old", object(R"({"a":1})"), "ref-1");
    const PresenceDiff diff = presence.track(7, "new", object(R"({"a":1})"), "ref-2");

    QCOMPARE(object(diff.toJson()),
             object(R"({"joins":{"new":{"metas":[{"a":1,"phx_ref":"ref-2",)"
                    R"("phx_ref_prev":"ref-1"}]}},)"
                    R"("leaves":{"old":{"metas":[{"a":1,"phx_ref":"ref-1"}]}}})"));
    QCOMPARE(object(presence.stateJson()),
             object(R"({"new":{"metas":[{"a":1,"phx_ref":"ref-2"}]}})"));
}

void TopicPresenceTest::untrackIsALeaveOfTheCurrentMeta()
{
    TopicPresence presence;
    presence.track(1, "user-1", object(R"({"name":"Ann"})"), "ref-1");
    presence.track(2, "user-2", object(R"({"name":"Bob"})"), "ref-2");
    presence.track(1, "user-1", object(R"({"name":"Ann2"})"), "ref-3");

    const PresenceDiff diff = presence.untrack(1);
    QCOMPARE(object(diff.toJson()),
             object(R"({"joins":{},"leaves":{"user-1":{"metas":[{"name":"Ann2",)"
                    R"("phx_ref":"ref-3"}]}}})"));
    QVERIFY(!presence.isTracked(1));
    QVERIFY(presence.isTracked(2));
    QCOMPARE(presence.size(), 1);
    QCOMPARE(object(presence.stateJson()),
             object(R"({"user-2":{"metas":[{"name":"Bob","phx_ref":"ref-2"}]}})"));

    presence.untrack(2);
    QVERIFY(presence.isEmpty());

    // Tracking again after an untrack is a fresh join (no phx_ref_prev).
    const PresenceDiff rejoin = presence.track(1, "user-1", object(R"({"name":"Ann"})"), "ref-4");
    QCOMPARE(object(rejoin.toJson()),
             object(R"({"joins":{"user-1":{"metas":[{"name":"Ann","phx_ref":"ref-4"}]}},)"
                    R"("leaves":{}})"));
}

void TopicPresenceTest::untrackOfAnUntrackedMemberIsEmpty()
{
    TopicPresence presence;
    QVERIFY(presence.untrack(42).isEmpty());
    presence.track(1, "k", {}, "ref-1");
    QVERIFY(presence.untrack(2).isEmpty());
    QVERIFY(!presence.untrack(1).isEmpty());
    QVERIFY(presence.untrack(1).isEmpty());
}

void TopicPresenceTest::clientSuppliedRefsAreIgnored_data()
{
    QTest::addColumn<QByteArray>("meta");
    QTest::addColumn<QByteArray>("expectedMeta");

    QTest::newRow("phx_ref") << QByteArray(R"({"name":"Ann","phx_ref":"forged"})")
                             << QByteArray(R"({"name":"Ann","phx_ref":"server-ref"})");
    QTest::newRow("phx_ref_prev") << QByteArray(R"({"name":"Ann","phx_ref_prev":"forged"})")
                                  << QByteArray(R"({"name":"Ann","phx_ref":"server-ref"})");
    QTest::newRow("both") << QByteArray(R"({"phx_ref":1,"phx_ref_prev":null,"x":true})")
                          << QByteArray(R"({"phx_ref":"server-ref","x":true})");
    QTest::newRow("empty meta") << QByteArray("{}") << QByteArray(R"({"phx_ref":"server-ref"})");
}

void TopicPresenceTest::clientSuppliedRefsAreIgnored()
{
    QFETCH(QByteArray, meta);
    QFETCH(QByteArray, expectedMeta);

    TopicPresence presence;
    const PresenceDiff diff = presence.track(1, "k", object(meta), "server-ref");
    QCOMPARE(diff.joins.size(), 1);
    QCOMPARE(diff.joins.constFirst().meta, object(expectedMeta));
    QCOMPARE(metasOf(object(presence.stateJson()), QStringLiteral("k")),
             QJsonArray{ object(expectedMeta) });

    // Re-tracking the same meta with another forged ref is still a no-op: the forged refs are
    // not part of the meta.
    QJsonObject forged = object(meta);
    forged.insert(QStringLiteral("phx_ref"), QStringLiteral("other-forgery"));
    QVERIFY(presence.track(1, "k", forged, "server-ref-2").isEmpty());
}

void TopicPresenceTest::stateGroupsByKeyInTrackingOrder()
{
    TopicPresence presence;
    presence.track(30, "a", object(R"({"n":1})"), "r1");
    presence.track(10, "b", object(R"({"n":2})"), "r2");
    presence.track(20, "a", object(R"({"n":3})"), "r3");
    presence.track(5, "a", object(R"({"n":4})"), "r4");

    const QJsonObject state = object(presence.stateJson());
    QCOMPARE(state.keys(), (QStringList{ QStringLiteral("a"), QStringLiteral("b") }));
    // One meta per tracking member, in the order the members first tracked.
    QCOMPARE(metasOf(state, QStringLiteral("a")),
             (QJsonArray{ object(R"({"n":1,"phx_ref":"r1"})"), object(R"({"n":3,"phx_ref":"r3"})"),
                          object(R"({"n":4,"phx_ref":"r4"})") }));
    QCOMPARE(metasOf(state, QStringLiteral("b")),
             QJsonArray{ object(R"({"n":2,"phx_ref":"r2"})") });
    // Every value is exactly {"metas":[...]}.
    for (const QString &key : state.keys()) {
        QCOMPARE(state.value(key).toObject().keys(), QStringList{ QStringLiteral("metas") });
    }
}

void TopicPresenceTest::stateOfManyMembersKeepsTrackingOrder()
{
    // Enough members that a hash-ordered container would visibly reorder them.
    TopicPresence presence;
    constexpr int Members = 200;
    for (int i = 0; i < Members; ++i) {
        const auto member = static_cast<quint64>((i * 7919) % 1009 + 1);
        QJsonObject meta;
        meta.insert(QStringLiteral("i"), i);
        presence.track(member, i % 2 == 0 ? "even" : "odd", meta, "r" + QByteArray::number(i));
    }
    QCOMPARE(presence.size(), Members);
    const QJsonObject state = object(presence.stateJson());
    const QJsonArray even = metasOf(state, QStringLiteral("even"));
    const QJsonArray odd = metasOf(state, QStringLiteral("odd"));
    QCOMPARE(even.size(), Members / 2);
    QCOMPARE(odd.size(), Members / 2);
    for (int i = 0; i < Members / 2; ++i) {
        QCOMPARE(even.at(i).toObject().value(QLatin1String("i")).toInt(), 2 * i);
        QCOMPARE(odd.at(i).toObject().value(QLatin1String("i")).toInt(), 2 * i + 1);
    }
}

void TopicPresenceTest::stateOfAnEmptyTopicIsAnEmptyObject()
{
    TopicPresence presence;
    QCOMPARE(presence.stateJson(), QByteArray("{}"));
    QVERIFY(presence.isEmpty());
    presence.track(1, "k", {}, "r");
    presence.untrack(1);
    QCOMPARE(presence.stateJson(), QByteArray("{}"));
}

void TopicPresenceTest::diffJsonGroupsEntriesByKey()
{
    PresenceDiff diff;
    diff.joins.append({ "k", object(R"({"n":1,"phx_ref":"a"})") });
    diff.joins.append({ "other", object(R"({"n":2,"phx_ref":"b"})") });
    diff.joins.append({ "k", object(R"({"n":3,"phx_ref":"c"})") });
    diff.leaves.append({ "\xc3\xbc", object(R"({"phx_ref":"d"})") }); // UTF-8 key "ü"

    QCOMPARE(object(diff.toJson()),
             object(R"({"joins":{"k":{"metas":[{"n":1,"phx_ref":"a"},{"n":3,"phx_ref":"c"}]},)"
                    R"("other":{"metas":[{"n":2,"phx_ref":"b"}]}},)"
                    "\"leaves\":{\"\xc3\xbc\":{\"metas\":[{\"phx_ref\":\"d\"}]}}}"));
}

void TopicPresenceTest::emptyDiffJsonHasBothSides()
{
    const PresenceDiff diff;
    QVERIFY(diff.isEmpty());
    QCOMPARE(object(diff.toJson()), object(R"({"joins":{},"leaves":{}})"));
}

QTEST_GUILESS_MAIN(TopicPresenceTest)
#include "tst_topic_presence.moc"
