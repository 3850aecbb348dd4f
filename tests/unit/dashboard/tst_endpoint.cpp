// URL derivation: the operator's URL and the snapshot's client addresses as node base URLs, and
// the admin API's HTTP and live-feed URLs on them.
#include "dashboard/api/endpoint.h"

#include <QTest>

using rt::dashboard::adminHttpUrl;
using rt::dashboard::endpointLabel;
using rt::dashboard::liveFeedUrl;
using rt::dashboard::mergeEndpoints;
using rt::dashboard::nodeBaseUrl;
using rt::dashboard::nodeBaseUrlFromAddress;

class EndpointTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void operatorUrl_data()
    {
        QTest::addColumn<QString>("typed");
        QTest::addColumn<QString>("base"); // empty: refused
        QTest::newRow("http") << QStringLiteral("http://node-a:4000")
                              << QStringLiteral("http://node-a:4000");
        QTest::newRow("https, path dropped")
                << QStringLiteral("https://rt.example.com/api/admin?x=1#y")
                << QStringLiteral("https://rt.example.com");
        QTest::newRow("ws") << QStringLiteral("ws://10.0.0.1:4000/socket")
                            << QStringLiteral("http://10.0.0.1:4000");
        QTest::newRow("wss") << QStringLiteral("wss://rt.example.com:8443")
                             << QStringLiteral("https://rt.example.com:8443");
        QTest::newRow("bare host:port")
                << QStringLiteral("  localhost:4000 ") << QStringLiteral("http://localhost:4000");
        QTest::newRow("bare v6") << QStringLiteral("[::1]:4000")
                                 << QStringLiteral("http://[::1]:4000");
        QTest::newRow("upper-case scheme")
                << QStringLiteral("HTTP://node-a:4000") << QStringLiteral("http://node-a:4000");
        QTest::newRow("empty") << QString() << QString();
        QTest::newRow("other scheme") << QStringLiteral("ftp://node-a") << QString();
        QTest::newRow("no host") << QStringLiteral("http://:4000") << QString();
        QTest::newRow("user info") << QStringLiteral("http://op:secret@node-a:4000") << QString();
        QTest::newRow("bad port") << QStringLiteral("node-a:99999") << QString();
    }
    void operatorUrl()
    {
        QFETCH(QString, typed);
        QFETCH(QString, base);
        const std::optional<QUrl> url = nodeBaseUrl(typed);
        if (base.isEmpty()) {
            QVERIFY2(!url, qPrintable(url ? url->toString() : QString()));
            return;
        }
        QVERIFY(url);
        QCOMPARE(url->toString(), base);
    }

    void clientAddress_data()
    {
        QTest::addColumn<QString>("address");
        QTest::addColumn<QString>("operatorUrl");
        QTest::addColumn<QString>("base");
        QTest::newRow("host:port takes http")
                << QStringLiteral("10.0.0.2:4000") << QStringLiteral("http://10.0.0.1:4000")
                << QStringLiteral("http://10.0.0.2:4000");
        QTest::newRow("host:port takes https") << QStringLiteral("node-b.example.com:443")
                                               << QStringLiteral("https://node-a.example.com")
                                               << QStringLiteral("https://node-b.example.com:443");
        QTest::newRow("v6") << QStringLiteral("[fd00::2]:4000")
                            << QStringLiteral("http://[fd00::1]:4000")
                            << QStringLiteral("http://[fd00::2]:4000");
        QTest::newRow("a URL keeps its scheme")
                << QStringLiteral("https://node-b:4443") << QStringLiteral("http://node-a:4000")
                << QStringLiteral("https://node-b:4443");
        QTest::newRow("any v4 cannot be dialled")
                << QStringLiteral("0.0.0.0:4000") << QStringLiteral("http://node-a:4000")
                << QString();
        QTest::newRow("any v6 cannot be dialled")
                << QStringLiteral("[::]:4000") << QStringLiteral("http://node-a:4000") << QString();
        QTest::newRow("empty") << QString() << QStringLiteral("http://node-a:4000") << QString();
    }
    void clientAddress()
    {
        QFETCH(QString, address);
        QFETCH(QString, operatorUrl);
        QFETCH(QString, base);
        const std::optional<QUrl> url = nodeBaseUrlFromAddress(address, *nodeBaseUrl(operatorUrl));
        if (base.isEmpty()) {
            QVERIFY(!url);
            return;
        }
        QVERIFY(url);
        QCOMPARE(url->toString(), base);
    }

    void derivedUrls()
    {
        const QUrl plain = *nodeBaseUrl(QStringLiteral("http://node-a:4000"));
        const QUrl tls = *nodeBaseUrl(QStringLiteral("https://node-a"));
        QCOMPARE(liveFeedUrl(plain).toString(),
                 QStringLiteral("ws://node-a:4000/api/admin/live/websocket?vsn=1.0.0"));
        QCOMPARE(liveFeedUrl(tls).toString(),
                 QStringLiteral("wss://node-a/api/admin/live/websocket?vsn=1.0.0"));
        QCOMPARE(adminHttpUrl(plain, QStringLiteral("/api/admin/snapshot")).toString(),
                 QStringLiteral("http://node-a:4000/api/admin/snapshot"));
        // A key's '?' and '#' stay in the path segment.
        QCOMPARE(adminHttpUrl(plain, QStringLiteral("/api/cluster/config/odd?key#1"))
                         .toString(QUrl::FullyEncoded),
                 QStringLiteral("http://node-a:4000/api/cluster/config/odd%3Fkey%231"));
        QUrlQuery query;
        query.addQueryItem(QStringLiteral("expected_revision"), QStringLiteral("42"));
        QCOMPARE(adminHttpUrl(plain, QStringLiteral("/api/cluster/config/region_mapping"), query)
                         .toString(),
                 QStringLiteral("http://node-a:4000/api/cluster/config/"
                                "region_mapping?expected_revision=42"));
        QCOMPARE(endpointLabel(plain), QStringLiteral("node-a:4000"));
        QCOMPARE(endpointLabel(*nodeBaseUrl(QStringLiteral("[::1]:4000"))),
                 QStringLiteral("[::1]:4000"));
    }

    void mergeKeepsTheOperatorsNodeFirstWithoutDuplicates()
    {
        const QUrl a = *nodeBaseUrl(QStringLiteral("http://node-a:4000"));
        const QUrl b = *nodeBaseUrl(QStringLiteral("http://node-b:4000"));
        const QUrl c = *nodeBaseUrl(QStringLiteral("http://node-c:4000"));
        const QUrl aUpper = *nodeBaseUrl(QStringLiteral("http://NODE-A:4000"));
        const QUrl defaultPort = *nodeBaseUrl(QStringLiteral("http://node-d"));
        const QUrl explicitPort = *nodeBaseUrl(QStringLiteral("http://node-d:80"));
        QCOMPARE(mergeEndpoints(b, { a, b, c, aUpper, defaultPort, explicitPort, QUrl() }),
                 (QList<QUrl>{ b, a, c, defaultPort }));
    }
};

QTEST_GUILESS_MAIN(EndpointTest)
#include "tst_endpoint.moc"
