// Remote presences in one node's PresenceStore (the replication entry points, without links):
// ids of different origins never collide, replicated changes publish the origin's diffs, a full
// sync publishes only the differences (no duplicate joins), a departed origin's presences all
// leave, local changes are announced in order, and localPresences() is what a sync must carry.
#include "server/presence/presence_store.h"
#include "server/presence/topic_presence.h"
#include "server/pubsub/hub.h"
#include "server/pubsub/local_pubsub.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

#include <memory>

using rt::presence::MemberRef;
using rt::presence::PresenceChange;
using rt::presence::PresenceRecord;
using rt::presence::PresenceStore;
using rt::presence::TopicPresence;
using rt::protocol::Vsn;
using rt::pubsub::Hub;
using rt::pubsub::LocalPubSub;
using rt::pubsub::MemberRights;
using rt::pubsub::OutboundMessage;
using rt::pubsub::Subscriber;
using rt::pubsub::TopicKey;

namespace {

const TopicKey Room("tenant-a", false, "room");
const TopicKey Lobby("tenant-a", false, "lobby");

QJsonObject object(QByteArrayView json)
{
    return QJsonDocument::fromJson(json.toByteArray()).object();
}

class DiffRecorder final : public Subscriber
{
public:
    void deliver(const OutboundMessage &, const OutboundMessage::Frame &frame) override
    {
        diffs.append(object(frame.bytes).value(QLatin1String("payload")).toObject());
    }
    QList<QJsonObject> diffs; // hub and store share the test's thread
};

// "key:phx_ref" of every meta on one side of a diff, sorted.
QStringList refs(const QJsonObject &diff, const char *side)
{
    QStringList all;
    const QJsonObject grouped = diff.value(QLatin1String(side)).toObject();
    for (auto it = grouped.begin(); it != grouped.end(); ++it) {
        const QJsonArray metas = it.value().toObject().value(QLatin1String("metas")).toArray();
        for (const QJsonValue &meta : metas) {
            all.append(it.key() + QLatin1Char(':')
                       + meta.toObject().value(QLatin1String("phx_ref")).toString());
        }
    }
    all.sort();
    return all;
}

PresenceRecord remote(const TopicKey &topic, quint64 member, const char *key, const char *ref,
                      const char *metaJson = "{}")
{
    return PresenceRecord{ topic, member, key, object(metaJson), ref };
}

PresenceChange tracked(const PresenceRecord &record)
{
    return PresenceChange{ PresenceChange::Op::Track, record };
}

} // namespace

class PresenceRemoteTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void sameMemberIdOnTwoOriginsIsTwoPresences();
    void remoteUpdateCarriesThePreviousRef();
    void remoteUntrackLeaves();
    void replaceJoinsOnlyWhatIsNew();
    void replaceLeavesWhatVanished();
    void dropLeavesEverythingOfTheOrigin();
    void localChangesAreAnnouncedInOrder();
    void localPresencesListsOnlyThisNode();
    void topicPresenceRemoveOrigin();

private:
    std::unique_ptr<LocalPubSub> m_pubsub;
    std::unique_ptr<Hub> m_hub;
    std::unique_ptr<PresenceStore> m_store;
    DiffRecorder m_room;
    DiffRecorder m_lobby;
};

void PresenceRemoteTest::init()
{
    m_pubsub = std::make_unique<LocalPubSub>();
    m_hub = std::make_unique<Hub>();
    m_pubsub->addHub(m_hub.get());
    m_store = std::make_unique<PresenceStore>(*m_pubsub);
    m_room.diffs.clear();
    m_lobby.diffs.clear();
    m_hub->subscribe(Room, &m_room, 1'000'000, Vsn::V1, MemberRights{ true, true });
    m_hub->subscribe(Lobby, &m_lobby, 1'000'001, Vsn::V1, MemberRights{ true, true });
}

void PresenceRemoteTest::cleanup()
{
    m_hub->unsubscribe(Room, &m_room);
    m_hub->unsubscribe(Lobby, &m_lobby);
    m_store.reset();
    m_hub.reset();
    m_pubsub.reset();
}

void PresenceRemoteTest::sameMemberIdOnTwoOriginsIsTwoPresences()
{
    m_store->track(Room, 1, "local", {});
    m_store->applyRemoteChange(QStringLiteral("node-b"), tracked(remote(Room, 1, "b", "ref-b")));
    m_store->applyRemoteChange(QStringLiteral("node-c"), tracked(remote(Room, 1, "c", "ref-c")));
    QCOMPARE(m_store->presenceCount(Room), 3);
    QCOMPARE(m_room.diffs.size(), 3);
    QCOMPARE(refs(m_room.diffs.at(1), "joins"), QStringList{ QStringLiteral("b:ref-b") });
    QCOMPARE(refs(m_room.diffs.at(2), "joins"), QStringList{ QStringLiteral("c:ref-c") });
    const QJsonObject state = object(m_store->stateJson(Room));
    QCOMPARE(state.size(), 3);
    // Untracking local member 1 leaves the remote members 1 alone.
    m_store->untrack(Room, 1);
    QCOMPARE(m_store->presenceCount(Room), 2);
}

void PresenceRemoteTest::remoteUpdateCarriesThePreviousRef()
{
    const QString b = QStringLiteral("node-b");
    m_store->applyRemoteChange(b, tracked(remote(Room, 4, "k", "ref-1", R"({"v":1})")));
    m_store->applyRemoteChange(b, tracked(remote(Room, 4, "k", "ref-1", R"({"v":1})")));
    QCOMPARE(m_room.diffs.size(), 1); // the same version again: nothing
    m_store->applyRemoteChange(b, tracked(remote(Room, 4, "k", "ref-2", R"({"v":2})")));
    QCOMPARE(m_room.diffs.size(), 2);
    const QJsonObject update = m_room.diffs.at(1);
    QCOMPARE(
            update,
            object(R"({"joins":{"k":{"metas":[{"v":2,"phx_ref":"ref-2","phx_ref_prev":"ref-1"}]}},)"
                   R"("leaves":{"k":{"metas":[{"v":1,"phx_ref":"ref-1"}]}}})"));
}

void PresenceRemoteTest::remoteUntrackLeaves()
{
    const QString b = QStringLiteral("node-b");
    m_store->applyRemoteChange(b, tracked(remote(Room, 4, "k", "ref-1")));
    m_store->applyRemoteChange(
            b,
            PresenceChange{ PresenceChange::Op::Untrack, PresenceRecord{ Room, 4, {}, {}, {} } });
    QCOMPARE(m_store->presenceCount(Room), 0);
    QCOMPARE(refs(m_room.diffs.at(1), "leaves"), QStringList{ QStringLiteral("k:ref-1") });
    // Untracking what is not there publishes nothing.
    m_store->applyRemoteChange(
            b,
            PresenceChange{ PresenceChange::Op::Untrack, PresenceRecord{ Room, 4, {}, {}, {} } });
    QCOMPARE(m_room.diffs.size(), 2);
}

void PresenceRemoteTest::replaceJoinsOnlyWhatIsNew()
{
    const QString b = QStringLiteral("node-b");
    m_store->applyRemoteChange(b, tracked(remote(Room, 1, "k1", "r1")));
    m_room.diffs.clear();
    // The same state again (a sync after a flap): no diff at all.
    m_store->replaceRemoteOrigin(b, { remote(Room, 1, "k1", "r1") });
    QCOMPARE(m_room.diffs.size(), 0);
    // One new presence, one changed: one diff with exactly those.
    m_store->replaceRemoteOrigin(
            b, { remote(Room, 1, "k1", "r1b", R"({"x":1})"), remote(Room, 2, "k2", "r2") });
    QCOMPARE(m_room.diffs.size(), 1);
    QCOMPARE(refs(m_room.diffs.at(0), "joins"),
             (QStringList{ QStringLiteral("k1:r1b"), QStringLiteral("k2:r2") }));
    QCOMPARE(refs(m_room.diffs.at(0), "leaves"), QStringList{ QStringLiteral("k1:r1") });
    QCOMPARE(m_store->presenceCount(Room), 2);
}

void PresenceRemoteTest::replaceLeavesWhatVanished()
{
    const QString b = QStringLiteral("node-b");
    m_store->track(Room, 1, "local", {});
    m_store->replaceRemoteOrigin(b,
                                 { remote(Room, 1, "k1", "r1"), remote(Room, 2, "k2", "r2"),
                                   remote(Lobby, 3, "k3", "r3") });
    m_room.diffs.clear();
    m_lobby.diffs.clear();
    // Lobby vanished entirely, member 2 of Room too.
    m_store->replaceRemoteOrigin(b, { remote(Room, 1, "k1", "r1") });
    QCOMPARE(m_room.diffs.size(), 1);
    QCOMPARE(refs(m_room.diffs.at(0), "leaves"), QStringList{ QStringLiteral("k2:r2") });
    QCOMPARE(refs(m_room.diffs.at(0), "joins"), QStringList());
    QCOMPARE(m_lobby.diffs.size(), 1);
    QCOMPARE(refs(m_lobby.diffs.at(0), "leaves"), QStringList{ QStringLiteral("k3:r3") });
    QCOMPARE(m_store->presenceCount(Lobby), 0);
    QCOMPARE(m_store->presenceCount(Room), 2); // local + k1
    // An empty sync removes the rest of b, never the local presence.
    m_store->replaceRemoteOrigin(b, {});
    QCOMPARE(m_store->presenceCount(Room), 1);
}

void PresenceRemoteTest::dropLeavesEverythingOfTheOrigin()
{
    m_store->track(Room, 1, "local", {});
    m_store->replaceRemoteOrigin(QStringLiteral("node-b"),
                                 { remote(Room, 1, "b1", "rb1"), remote(Lobby, 2, "b2", "rb2") });
    m_store->replaceRemoteOrigin(QStringLiteral("node-c"), { remote(Room, 1, "c1", "rc1") });
    m_room.diffs.clear();
    m_lobby.diffs.clear();
    m_store->dropRemoteOrigin(QStringLiteral("node-b"));
    QCOMPARE(m_room.diffs.size(), 1);
    QCOMPARE(refs(m_room.diffs.at(0), "leaves"), QStringList{ QStringLiteral("b1:rb1") });
    QCOMPARE(refs(m_lobby.diffs.at(0), "leaves"), QStringList{ QStringLiteral("b2:rb2") });
    QCOMPARE(m_store->presenceCount(Room), 2);
    // Dropping again, or an unknown node: nothing.
    m_store->dropRemoteOrigin(QStringLiteral("node-b"));
    m_store->dropRemoteOrigin(QStringLiteral("node-x"));
    QCOMPARE(m_room.diffs.size(), 1);
}

void PresenceRemoteTest::localChangesAreAnnouncedInOrder()
{
    QSignalSpy spy(m_store.get(), &PresenceStore::localChanged);
    m_store->track(Room, 1, "k", object(R"({"a":1,"phx_ref":"forged"})"));
    m_store->track(Room, 1, "k", object(R"({"a":1})")); // identical: no change
    m_store->track(Room, 1, "k", object(R"({"a":2})"));
    m_store->untrack(Room, 1);
    m_store->untrack(Room, 1); // not tracked: no change
    m_store->applyRemoteChange(QStringLiteral("node-b"), tracked(remote(Room, 1, "b", "rb")));
    QCOMPARE(spy.size(), 3); // remote changes are not announced again
    const auto first = spy.at(0).at(0).value<PresenceChange>();
    QCOMPARE(first.op, PresenceChange::Op::Track);
    QCOMPARE(first.record.meta, object(R"({"a":1})")); // the stored meta, no client phx_ref
    const auto second = spy.at(1).at(0).value<PresenceChange>();
    QCOMPARE(second.record.meta, object(R"({"a":2})"));
    QVERIFY(second.record.ref != first.record.ref);
    QCOMPARE(spy.at(2).at(0).value<PresenceChange>().op, PresenceChange::Op::Untrack);
}

void PresenceRemoteTest::localPresencesListsOnlyThisNode()
{
    m_store->track(Room, 1, "a", object(R"({"n":1})"));
    m_store->track(Lobby, 2, "b", {});
    m_store->applyRemoteChange(QStringLiteral("node-b"), tracked(remote(Room, 1, "x", "rx")));
    QList<PresenceRecord> local = m_store->localPresences();
    std::sort(local.begin(), local.end(),
              [](const PresenceRecord &l, const PresenceRecord &r) { return l.key < r.key; });
    QCOMPARE(local.size(), 2);
    QCOMPARE(local.at(0).topic, Room);
    QCOMPARE(local.at(0).memberId, quint64(1));
    QCOMPARE(local.at(0).meta, object(R"({"n":1})"));
    QCOMPARE(local.at(0).ref.size(), 16);
    QCOMPARE(local.at(1).topic, Lobby);
}

void PresenceRemoteTest::topicPresenceRemoveOrigin()
{
    TopicPresence topic;
    topic.track(1, "local", {}, "r0");
    topic.put(MemberRef{ 2, 1 }, "b", {}, "r1");
    topic.put(MemberRef{ 2, 5 }, "b", {}, "r2");
    topic.put(MemberRef{ 3, 1 }, "c", {}, "r3");
    QCOMPARE(topic.membersOf(2).size(), 2);
    QCOMPARE(topic.recordsOf(2).at(0).ref, QByteArray("r1")); // tracking order
    const auto diff = topic.removeOrigin(2);
    QCOMPARE(diff.leaves.size(), 2);
    QCOMPARE(diff.leaves.at(0).meta.value(QLatin1String("phx_ref")).toString(),
             QStringLiteral("r1"));
    QVERIFY(diff.joins.isEmpty());
    QCOMPARE(topic.size(), 2);
    QVERIFY(topic.isTracked(1));
    QVERIFY(topic.isTracked(MemberRef{ 3, 1 }));
}

QTEST_GUILESS_MAIN(PresenceRemoteTest)
#include "tst_presence_remote.moc"
