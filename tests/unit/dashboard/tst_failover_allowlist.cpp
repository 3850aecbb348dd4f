// Which nodes the dashboard may fail over to (and so send its token to): the operator's scheme
// only, and the patterns' hosts when there are patterns; invalid patterns refused by name.
#include "dashboard/api/failover_allowlist.h"

#include <QTest>

using rt::dashboard::FailoverAllowlist;

namespace {

FailoverAllowlist allowlist(const char *operatorUrl, const QStringList &patterns = {})
{
    auto created = FailoverAllowlist::create(QUrl(QString::fromLatin1(operatorUrl)), patterns);
    if (!created) {
        qFatal("%s", qPrintable(created.error().message));
    }
    return std::move(created).value();
}

QUrl url(const char *text)
{
    return QUrl(QString::fromLatin1(text));
}

} // namespace

class FailoverAllowlistTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theDefaultAdmitsEveryHostUnderTheSameScheme()
    {
        const FailoverAllowlist list = allowlist("https://node-a:4000");
        QVERIFY(!list.restricted());
        QVERIFY(list.admits(url("https://node-a:4000")));
        QVERIFY(list.admits(url("https://node-b.example.com:4443")));
        QVERIFY(list.admits(url("https://10.1.2.3:4000")));
        // Never down to plaintext, where the token would travel in clear.
        QVERIFY(!list.admits(url("http://node-b:4000")));
        QVERIFY(!list.admits(url("http://node-a:4000")));
        QVERIFY(!list.admits(QUrl()));
        // A plaintext session stays plaintext too (the operator chose it).
        QVERIFY(!allowlist("http://node-a:4000").admits(url("https://node-b:4000")));
        // Admits nothing before a connection.
        QVERIFY(!FailoverAllowlist().admits(url("http://node-a:4000")));
    }

    void patternsRestrictTheHosts_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QString>("candidate");
        QTest::addColumn<bool>("admitted");
        QTest::newRow("exact name") << QStringLiteral("node-b.rt.internal")
                                    << QStringLiteral("https://node-b.rt.internal:4000") << true;
        QTest::newRow("name, case") << QStringLiteral("Node-B.RT.internal")
                                    << QStringLiteral("https://NODE-b.rt.internal") << true;
        QTest::newRow("other name") << QStringLiteral("node-b.rt.internal")
                                    << QStringLiteral("https://node-c.rt.internal") << false;
        QTest::newRow("wildcard") << QStringLiteral("*.rt.internal")
                                  << QStringLiteral("https://c.eu.rt.internal:1") << true;
        QTest::newRow("wildcard, not the domain itself")
                << QStringLiteral("*.rt.internal") << QStringLiteral("https://rt.internal")
                << false;
        QTest::newRow("wildcard, not a lookalike")
                << QStringLiteral("*.rt.internal") << QStringLiteral("https://evil-rt.internal")
                << false;
        QTest::newRow("wildcard, no address")
                << QStringLiteral("*.0.0.1") << QStringLiteral("https://127.0.0.1") << false;
        QTest::newRow("address") << QStringLiteral("198.18.0.11")
                                 << QStringLiteral("https://198.18.0.11:4000") << true;
        QTest::newRow("other address") << QStringLiteral("198.18.0.11")
                                       << QStringLiteral("https://198.18.0.12:4000") << false;
        QTest::newRow("subnet") << QStringLiteral("198.18.0.0/15")
                                << QStringLiteral("https://198.19.255.1:4000") << true;
        QTest::newRow("outside the subnet") << QStringLiteral("198.18.0.0/15")
                                            << QStringLiteral("https://198.20.0.1:4000") << false;
        QTest::newRow("subnet, a name")
                << QStringLiteral("198.18.0.0/15") << QStringLiteral("https://node-b") << false;
        QTest::newRow("v6 subnet")
                << QStringLiteral("fd00::/8") << QStringLiteral("https://[fd12::1]:4000") << true;
        QTest::newRow("v6 address, brackets")
                << QStringLiteral("[fd12::1]") << QStringLiteral("https://[fd12::1]:4000") << true;
        QTest::newRow("v6 address, other form")
                << QStringLiteral("fd12:0::1") << QStringLiteral("https://[fd12::1]:4000") << true;
        QTest::newRow("right host, wrong scheme")
                << QStringLiteral("node-b.rt.internal")
                << QStringLiteral("http://node-b.rt.internal:4000") << false;
    }

    void patternsRestrictTheHosts()
    {
        QFETCH(QString, pattern);
        QFETCH(QString, candidate);
        QFETCH(bool, admitted);
        const FailoverAllowlist list = allowlist("https://node-a.rt.internal:4000", { pattern });
        QVERIFY(list.restricted());
        QCOMPARE(list.admits(QUrl(candidate)), admitted);
        // The operator's own host stays admitted, on any port.
        QVERIFY(list.admits(url("https://node-a.rt.internal:4001")));
    }

    void filterKeepsTheOrderOfAdmittedOnes()
    {
        const FailoverAllowlist list = allowlist("https://a.rt:1", { QStringLiteral("*.rt") });
        const QList<QUrl> candidates{ url("https://c.rt:1"), url("http://b.rt:1"),
                                      url("https://x.other:1"), url("https://b.rt:1") };
        QCOMPARE(list.filter(candidates),
                 (QList<QUrl>{ url("https://c.rt:1"), url("https://b.rt:1") }));
    }

    void invalidPatternsAreRefusedByName_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::newRow("scheme") << QStringLiteral("https://node-b");
        QTest::newRow("port") << QStringLiteral("node-b:4000");
        QTest::newRow("inner wildcard") << QStringLiteral("node.*.internal");
        QTest::newRow("bare wildcard") << QStringLiteral("*");
        QTest::newRow("bad subnet") << QStringLiteral("10.0.0.0/33");
        QTest::newRow("path") << QStringLiteral("node-b/x");
        QTest::newRow("space inside") << QStringLiteral("node b");
        QTest::newRow("empty") << QString();
        QTest::newRow("underscore") << QStringLiteral("node_b");
    }

    void invalidPatternsAreRefusedByName()
    {
        QFETCH(QString, pattern);
        const auto created = FailoverAllowlist::create(url("https://a:1"), { pattern });
        QVERIFY(!created);
        QCOMPARE(created.error().message,
                 QStringLiteral("\"%1\" is not a host name, *.domain, IP address or subnet (a "
                                "failover host has no scheme and no port).")
                         .arg(pattern));
    }

    void listsSplitOnCommasAndSpaces()
    {
        QCOMPARE(
                FailoverAllowlist::splitPatterns(QStringLiteral(" a.rt, *.b.rt ,,10.0.0.0/8\n c ")),
                (QStringList{ QStringLiteral("a.rt"), QStringLiteral("*.b.rt"),
                              QStringLiteral("10.0.0.0/8"), QStringLiteral("c") }));
        QVERIFY(FailoverAllowlist::splitPatterns(QStringLiteral(" , ")).isEmpty());
    }
};

QTEST_GUILESS_MAIN(FailoverAllowlistTest)
#include "tst_failover_allowlist.moc"
