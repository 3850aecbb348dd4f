#include "server/pubsub/topic_key.h"

#include <QSet>
#include <QTest>

using rt::pubsub::TopicKey;

// Tests the identity of a topic: tenant, privacy namespace and sub-topic (spec/server-protocol.md
// §3.1: public X and private X never see each other's messages; tenants never share topics).
class TopicKeyTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void accessors();
    void distinctKeys_data();
    void distinctKeys();
    void equalKeysHashEqually();
};

void TopicKeyTest::accessors()
{
    const TopicKey key("tenant", true, "room:1");
    QCOMPARE(key.tenant(), QByteArray("tenant"));
    QCOMPARE(key.subTopic(), QByteArray("room:1"));
    QVERIFY(key.isPrivate());
    QCOMPARE(key.channelTopic(), QByteArray("realtime:room:1"));
    QCOMPARE(TopicKey("t", false, "").channelTopic(), QByteArray("realtime:"));
}

void TopicKeyTest::distinctKeys_data()
{
    QTest::addColumn<QByteArray>("tenantA");
    QTest::addColumn<bool>("privateA");
    QTest::addColumn<QByteArray>("subTopicA");
    QTest::addColumn<QByteArray>("tenantB");
    QTest::addColumn<bool>("privateB");
    QTest::addColumn<QByteArray>("subTopicB");

    QTest::newRow("privacy") << QByteArray("t") << false << QByteArray("room") << QByteArray("t")
                             << true << QByteArray("room");
    QTest::newRow("tenant") << QByteArray("a") << false << QByteArray("room") << QByteArray("b")
                            << false << QByteArray("room");
    QTest::newRow("sub-topic") << QByteArray("t") << false << QByteArray("room") << QByteArray("t")
                               << false << QByteArray("room2");
    // Subscribing publicly to "private:X" is not the private channel X (spec §3.1).
    QTest::newRow("private: prefix") << QByteArray("t") << false << QByteArray("private:x")
                                     << QByteArray("t") << true << QByteArray("x");
    // Boundaries between the parts cannot be shifted by the parts' contents.
    QTest::newRow("boundary") << QByteArray("a") << false << QByteArray("bc") << QByteArray("ab")
                              << false << QByteArray("c");
    // Sub-topics are chosen by clients; tenant ids (DNS labels) are not.
    QTest::newRow("separator in sub-topic") << QByteArray("t") << false << QByteArray("\x1fp\x1fy")
                                            << QByteArray("t") << true << QByteArray("y");
}

void TopicKeyTest::distinctKeys()
{
    QFETCH(QByteArray, tenantA);
    QFETCH(bool, privateA);
    QFETCH(QByteArray, subTopicA);
    QFETCH(QByteArray, tenantB);
    QFETCH(bool, privateB);
    QFETCH(QByteArray, subTopicB);

    const TopicKey a(tenantA, privateA, subTopicA);
    const TopicKey b(tenantB, privateB, subTopicB);
    QVERIFY(a != b);
    QVERIFY(!(a == b));
    QVERIFY(a.id() != b.id());
}

void TopicKeyTest::equalKeysHashEqually()
{
    const TopicKey a("tenant", false, "room");
    const TopicKey b(QByteArray("tenant"), false, QByteArray("room"));
    QVERIFY(a == b);
    QCOMPARE(a.id(), b.id());
    QCOMPARE(qHash(a), qHash(b));
    QSet<TopicKey> set{ a, b, TopicKey("tenant", true, "room") };
    QCOMPARE(set.size(), 2);
}

QTEST_GUILESS_MAIN(TopicKeyTest)
#include "tst_topic_key.moc"
