#include "recording_subscriber.h"
#include "server/pubsub/hub.h"
#include "tests/support/process/run_in_child.h"

#include <QRandomGenerator>
#include <QTest>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <vector>

using rt::protocol::Vsn;
using rt::pubsub::Audience;
using rt::pubsub::Hub;
using rt::pubsub::MemberRights;
using rt::pubsub::OutboundMessage;
using rt::pubsub::OutboundMessagePtr;
using rt::pubsub::TopicKey;
using rt::pubsub::test::RecordingSubscriber;

Q_DECLARE_METATYPE(rt::pubsub::Audience)

namespace {

const TopicKey Room("tenant", false, "room");

OutboundMessagePtr textBroadcast(const TopicKey &topic, quint64 excluded = 0)
{
    return OutboundMessage::push(topic, "broadcast", R"({"type":"broadcast","event":"e"})",
                                 Audience::BroadcastReaders, excluded);
}

} // namespace

// Tests one worker's topic -> members table: membership with swap-removal, delivery to members
// that may read a message (MemberRights, spec §7.4), exclusion of a sender without
// broadcast.self, and the shared per-serializer frames.
class HubTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void deliversToEveryMemberOfTheTopicOnly();
    void memberAndTopicCounts();
    void unsubscribeOfANonMemberIsANoOp();
    void unsubscribeFromAnotherTopicIsANoOp();
    void swapRemoveKeepsTheRightMembers();
    void resubscribeAfterUnsubscribe();
    void audienceFiltering_data();
    void audienceFiltering();
    void setRightsChangesFiltering();
    void excludedMemberGetsNothing();
    void addressedPushReachesOnlyItsMembers();
    void eachMemberGetsItsSerializersSharedFrame();
    void rawUserBroadcastSkipsV1Members();
    void publicAndPrivateNamespacesAreSeparate();
};

void HubTest::deliversToEveryMemberOfTheTopicOnly()
{
    Hub hub;
    RecordingSubscriber a;
    RecordingSubscriber b;
    RecordingSubscriber elsewhere;
    hub.subscribe(Room, &a, 1, Vsn::V2, {});
    hub.subscribe(Room, &b, 2, Vsn::V2, {});
    hub.subscribe(TopicKey("tenant", false, "other"), &elsewhere, 3, Vsn::V2, {});

    hub.deliver(textBroadcast(Room));
    QCOMPARE(a.count(), 1);
    QCOMPARE(b.count(), 1);
    QCOMPARE(elsewhere.count(), 0);
    // Delivery is synchronous, on the calling (the hub's) thread.
    QCOMPARE(a.records().constFirst().thread, QThread::currentThread());

    // A topic without members: nothing happens.
    hub.deliver(textBroadcast(TopicKey("tenant", false, "nobody")));
    QCOMPARE(a.count() + b.count() + elsewhere.count(), 2);

    hub.unsubscribe(Room, &a);
    hub.unsubscribe(Room, &b);
    hub.unsubscribe(TopicKey("tenant", false, "other"), &elsewhere);
}

void HubTest::memberAndTopicCounts()
{
    Hub hub;
    std::array<RecordingSubscriber, 3> members;
    const TopicKey other("tenant", false, "other");
    QCOMPARE(hub.topicCount(), 0);
    hub.subscribe(Room, &members[0], 1, Vsn::V1, {});
    hub.subscribe(Room, &members[1], 2, Vsn::V1, {});
    hub.subscribe(other, &members[2], 3, Vsn::V1, {});
    QCOMPARE(hub.topicCount(), 2);
    QCOMPARE(hub.membershipCount(), 3); // joined channels, not topics
    QCOMPARE(hub.memberCount(Room), 2);
    QCOMPARE(hub.memberCount(other), 1);
    QCOMPARE(hub.memberCount(TopicKey("tenant", false, "none")), 0);

    hub.unsubscribe(other, &members[2]);
    // The last member leaving removes the topic.
    QCOMPARE(hub.topicCount(), 1);
    QCOMPARE(hub.memberCount(other), 0);
    QCOMPARE(hub.membershipCount(), 2);
    hub.unsubscribe(Room, &members[0]);
    hub.unsubscribe(Room, &members[0]); // not a member any more: no change
    QCOMPARE(hub.membershipCount(), 1);
    hub.unsubscribe(Room, &members[1]);
    QCOMPARE(hub.topicCount(), 0);
    QCOMPARE(hub.membershipCount(), 0);
}

void HubTest::unsubscribeOfANonMemberIsANoOp()
{
    Hub hub;
    RecordingSubscriber member;
    RecordingSubscriber stranger;
    hub.subscribe(Room, &member, 1, Vsn::V1, {});
    hub.unsubscribe(Room, &stranger); // never subscribed
    hub.unsubscribe(TopicKey("tenant", false, "none"), &stranger); // unknown topic
    QCOMPARE(hub.memberCount(Room), 1);
    hub.unsubscribe(Room, &member);
    hub.unsubscribe(Room, &member); // twice
    QCOMPARE(hub.memberCount(Room), 0);
}

void HubTest::unsubscribeFromAnotherTopicIsANoOp()
{
    // hub.h: "Removes `subscriber` from `topic`; a no-op when it is not subscribed." Here the
    // subscriber is a member of another topic. The hub uses its slot in `topic` regardless: a
    // debug build asserts and a release build removes (or writes past) someone else's slot. The
    // scenario runs in a child process so that the abort cannot take the whole suite down.
    const int status = rt::testsupport::runInChild([] {
        Hub hub;
        const TopicKey other("tenant", false, "other");
        RecordingSubscriber inRoom;
        RecordingSubscriber inOther;
        hub.subscribe(Room, &inRoom, 1, Vsn::V1, {});
        hub.subscribe(other, &inOther, 2, Vsn::V1, {});
        hub.unsubscribe(other, &inRoom); // inRoom is not a member of `other`
        const bool unchanged = hub.memberCount(Room) == 1 && hub.memberCount(other) == 1;
        hub.deliver(textBroadcast(other));
        return unchanged && inOther.count() == 1 && inRoom.count() == 0 ? 0 : 3;
    });
    QVERIFY2(WIFEXITED(status) && WEXITSTATUS(status) == 0,
             qPrintable(QStringLiteral("child status %1").arg(status)));
}

void HubTest::swapRemoveKeepsTheRightMembers()
{
    constexpr int Members = 64;
    Hub hub;
    std::vector<std::unique_ptr<RecordingSubscriber>> subscribers;
    for (int i = 0; i < Members; ++i) {
        subscribers.push_back(std::make_unique<RecordingSubscriber>());
        hub.subscribe(Room, subscribers.back().get(), static_cast<quint64>(i + 1), Vsn::V2, {});
    }
    // Remove in a seeded random order; after every removal, exactly the remaining members get
    // the next message, each exactly once.
    std::vector<int> order(Members);
    for (int i = 0; i < Members; ++i) {
        order[static_cast<std::size_t>(i)] = i;
    }
    QRandomGenerator random(20240501);
    std::shuffle(order.begin(), order.end(), random);
    std::vector<bool> subscribed(Members, true);
    std::vector<int> expected(Members, 0);
    for (const int removed : order) {
        hub.unsubscribe(Room, subscribers[static_cast<std::size_t>(removed)].get());
        subscribed[static_cast<std::size_t>(removed)] = false;
        hub.deliver(textBroadcast(Room));
        for (int i = 0; i < Members; ++i) {
            const auto index = static_cast<std::size_t>(i);
            if (subscribed[index]) {
                ++expected[index];
            }
            QCOMPARE(subscribers[index]->count(), qsizetype(expected[index]));
        }
        QCOMPARE(hub.memberCount(Room),
                 qsizetype(std::count(subscribed.begin(), subscribed.end(), true)));
        QCOMPARE(hub.membershipCount(), hub.memberCount(Room));
    }
    QCOMPARE(hub.topicCount(), 0);
}

void HubTest::resubscribeAfterUnsubscribe()
{
    Hub hub;
    RecordingSubscriber a;
    RecordingSubscriber b;
    hub.subscribe(Room, &a, 1, Vsn::V1, {});
    hub.subscribe(Room, &b, 2, Vsn::V1, {});
    hub.unsubscribe(Room, &a);
    // A subscriber may join again (another topic or the same) once it left.
    const TopicKey other("tenant", false, "other");
    hub.subscribe(other, &a, 1, Vsn::V1, {});
    hub.deliver(textBroadcast(Room));
    hub.deliver(textBroadcast(other));
    QCOMPARE(a.count(), 1);
    QCOMPARE(b.count(), 1);
    hub.unsubscribe(other, &a);
    hub.unsubscribe(Room, &b);
    hub.subscribe(Room, &a, 1, Vsn::V1, {});
    hub.deliver(textBroadcast(Room));
    QCOMPARE(a.count(), 2);
    QCOMPARE(b.count(), 1);
    hub.unsubscribe(Room, &a);
}

void HubTest::audienceFiltering_data()
{
    QTest::addColumn<Audience>("audience");
    QTest::addColumn<bool>("readsBroadcast");
    QTest::addColumn<bool>("readsPresence");
    QTest::addColumn<bool>("delivered");

    const std::map<Audience, const char *> names{ { Audience::BroadcastReaders, "broadcast" },
                                                  { Audience::PresenceReaders, "presence" },
                                                  { Audience::Everyone, "everyone" } };
    for (const auto &[audience, name] : names) {
        for (const bool broadcast : { true, false }) {
            for (const bool presence : { true, false }) {
                bool delivered = true;
                if (audience == Audience::BroadcastReaders) {
                    delivered = broadcast;
                } else if (audience == Audience::PresenceReaders) {
                    delivered = presence;
                }
                QTest::addRow("%s, broadcast %d, presence %d", name, broadcast, presence)
                        << audience << broadcast << presence << delivered;
            }
        }
    }
}

void HubTest::audienceFiltering()
{
    QFETCH(Audience, audience);
    QFETCH(bool, readsBroadcast);
    QFETCH(bool, readsPresence);
    QFETCH(bool, delivered);

    Hub hub;
    RecordingSubscriber member;
    RecordingSubscriber everything; // a public-channel member reads everything
    hub.subscribe(Room, &member, 1, Vsn::V1, MemberRights{ readsBroadcast, readsPresence });
    hub.subscribe(Room, &everything, 2, Vsn::V1, MemberRights{});
    hub.deliver(OutboundMessage::push(Room, "event", "{}", audience));
    QCOMPARE(member.count(), delivered ? 1 : 0);
    QCOMPARE(everything.count(), 1);
    hub.unsubscribe(Room, &member);
    hub.unsubscribe(Room, &everything);
}

void HubTest::setRightsChangesFiltering()
{
    Hub hub;
    RecordingSubscriber member;
    RecordingSubscriber other;
    hub.subscribe(Room, &other, 1, Vsn::V1, {});
    hub.subscribe(Room, &member, 2, Vsn::V1, MemberRights{ false, false });
    hub.deliver(textBroadcast(Room));
    QCOMPARE(member.count(), 0);

    // Rights evaluated later (spec §7: private channels authorise lazily).
    hub.setRights(Room, &member, MemberRights{ true, false });
    hub.deliver(textBroadcast(Room));
    hub.deliver(OutboundMessage::push(Room, "presence_diff", "{}", Audience::PresenceReaders));
    QCOMPARE(member.count(), 1);
    QCOMPARE(other.count(), 3);

    // setRights of a non-member or of an unknown topic changes nothing and does not crash.
    RecordingSubscriber stranger;
    hub.setRights(Room, &stranger, MemberRights{});
    hub.setRights(TopicKey("tenant", false, "none"), &member, MemberRights{ false, false });
    hub.deliver(textBroadcast(Room));
    QCOMPARE(member.count(), 2);
    QCOMPARE(stranger.count(), 0);

    hub.unsubscribe(Room, &member);
    hub.unsubscribe(Room, &other);
}

void HubTest::excludedMemberGetsNothing()
{
    Hub hub;
    RecordingSubscriber sender;
    RecordingSubscriber receiver;
    hub.subscribe(Room, &sender, 7, Vsn::V2, {});
    hub.subscribe(Room, &receiver, 8, Vsn::V2, {});

    // broadcast.self = false: the sender's own message is not delivered back to it.
    hub.deliver(textBroadcast(Room, 7));
    QCOMPARE(sender.count(), 0);
    QCOMPARE(receiver.count(), 1);
    // Also for user broadcasts.
    hub.deliver(OutboundMessage::userBroadcast(Room, "e", "{}", true, {}, 7));
    QCOMPARE(sender.count(), 0);
    QCOMPARE(receiver.count(), 2);
    // broadcast.self = true (no excluded member): both get it.
    hub.deliver(textBroadcast(Room));
    QCOMPARE(sender.count(), 1);
    QCOMPARE(receiver.count(), 3);
    hub.unsubscribe(Room, &sender);
    hub.unsubscribe(Room, &receiver);
}

void HubTest::addressedPushReachesOnlyItsMembers()
{
    Hub hub;
    RecordingSubscriber first;
    RecordingSubscriber second;
    RecordingSubscriber third;
    hub.subscribe(Room, &first, 3, Vsn::V2, {});
    hub.subscribe(Room, &second, 5, Vsn::V1, {});
    hub.subscribe(Room, &third, 9, Vsn::V2, {});

    // postgres_changes: only the channels whose bindings matched, whatever their serializer.
    hub.deliver(OutboundMessage::pushTo(Room, "postgres_changes", "{}", { 3, 5 }));
    QCOMPARE(first.count(), 1);
    QCOMPARE(second.count(), 1);
    QCOMPARE(third.count(), 0);
    hub.deliver(OutboundMessage::pushTo(Room, "postgres_changes", "{}", { 9 }));
    QCOMPARE(first.count(), 1);
    QCOMPARE(third.count(), 1);
    hub.deliver(OutboundMessage::pushTo(Room, "postgres_changes", "{}", {}));
    QCOMPARE(first.count() + second.count() + third.count(), 3);
    hub.unsubscribe(Room, &first);
    hub.unsubscribe(Room, &second);
    hub.unsubscribe(Room, &third);
}

void HubTest::eachMemberGetsItsSerializersSharedFrame()
{
    Hub hub;
    std::array<RecordingSubscriber, 6> members;
    for (std::size_t i = 0; i < members.size(); ++i) {
        hub.subscribe(Room, &members[i], i + 1, i % 2 == 0 ? Vsn::V1 : Vsn::V2, {});
    }
    const OutboundMessagePtr message =
            OutboundMessage::userBroadcast(Room, "msg", R"({"text":"hi"})", true, {});
    hub.deliver(message);

    const QByteArray &v1 = message->frameFor(Vsn::V1).bytes;
    const QByteArray &v2 = message->frameFor(Vsn::V2).bytes;
    QVERIFY(v1.constData() != v2.constData());
    for (std::size_t i = 0; i < members.size(); ++i) {
        const QList<RecordingSubscriber::Record> records = members[i].records();
        QCOMPARE(records.size(), 1);
        const bool isV1 = i % 2 == 0;
        // The very bytes encoded once for that serializer: no per-recipient copy or encoding.
        QCOMPARE(records.constFirst().bytes.constData(), isV1 ? v1.constData() : v2.constData());
        QCOMPARE(records.constFirst().isBinary, !isV1);
        QCOMPARE(records.constFirst().bytes.at(0), isV1 ? '{' : '\x04');
    }
    for (RecordingSubscriber &member : members) {
        hub.unsubscribe(Room, &member);
    }
}

void HubTest::rawUserBroadcastSkipsV1Members()
{
    Hub hub;
    RecordingSubscriber v1;
    RecordingSubscriber v2;
    hub.subscribe(Room, &v1, 1, Vsn::V1, {});
    hub.subscribe(Room, &v2, 2, Vsn::V2, {});
    hub.deliver(OutboundMessage::userBroadcast(Room, "bin", QByteArray("\x01\x02", 2), false, {}));
    QCOMPARE(v1.count(), 0);
    QCOMPARE(v2.count(), 1);
    QVERIFY(v2.records().constFirst().isBinary);
    hub.unsubscribe(Room, &v1);
    hub.unsubscribe(Room, &v2);
}

void HubTest::publicAndPrivateNamespacesAreSeparate()
{
    Hub hub;
    RecordingSubscriber publicMember;
    RecordingSubscriber privateMember;
    RecordingSubscriber otherTenant;
    const TopicKey privateRoom("tenant", true, "room");
    const TopicKey otherTenantRoom("tenant-2", false, "room");
    hub.subscribe(Room, &publicMember, 1, Vsn::V1, {});
    hub.subscribe(privateRoom, &privateMember, 2, Vsn::V1, {});
    hub.subscribe(otherTenantRoom, &otherTenant, 3, Vsn::V1, {});

    hub.deliver(textBroadcast(privateRoom));
    QCOMPARE(publicMember.count(), 0);
    QCOMPARE(privateMember.count(), 1);
    QCOMPARE(otherTenant.count(), 0);
    hub.deliver(textBroadcast(Room));
    QCOMPARE(publicMember.count(), 1);
    QCOMPARE(privateMember.count(), 1);
    QCOMPARE(otherTenant.count(), 0);

    hub.unsubscribe(Room, &publicMember);
    hub.unsubscribe(privateRoom, &privateMember);
    hub.unsubscribe(otherTenantRoom, &otherTenant);
}

QTEST_GUILESS_MAIN(HubTest)
#include "tst_hub.moc"
