#include "server/tenants/host.h"

#include <QTest>

using rt::tenants::tenantIdFromHost;

namespace {

// Distinct from every host label below, so a test can tell "self-host tenant" from "the label".
const QByteArray SelfHost = QByteArrayLiteral("self-tenant");

} // namespace

// Tests tenant derivation from the Host header: spec/server-protocol.md §1.3 (first DNS label of
// the host without port) plus our rule that IP literals and "localhost" address the self-host
// tenant.
class HostTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tenantIdFromHost_data();
    void tenantIdFromHost();
};

void HostTest::tenantIdFromHost_data()
{
    QTest::addColumn<QByteArray>("host");
    QTest::addColumn<QByteArray>("expected");

    // Spec §1.3 examples.
    QTest::newRow("realtime-dev.localhost")
            << QByteArray("realtime-dev.localhost") << QByteArray("realtime-dev");
    QTest::newRow("realtime-dev.localhost:4000")
            << QByteArray("realtime-dev.localhost:4000") << QByteArray("realtime-dev");
    QTest::newRow("abcd.supabase.co") << QByteArray("abcd.supabase.co") << QByteArray("abcd");
    QTest::newRow("abcd.supabase.co:443")
            << QByteArray("abcd.supabase.co:443") << QByteArray("abcd");
    QTest::newRow("no dot") << QByteArray("tenant") << QByteArray("tenant");
    QTest::newRow("no dot, port") << QByteArray("tenant:4000") << QByteArray("tenant");
    QTest::newRow("many labels") << QByteArray("a.b.c.d:1") << QByteArray("a");
    QTest::newRow("upper case") << QByteArray("ABCD.Supabase.CO") << QByteArray("abcd");
    QTest::newRow("surrounding blanks") << QByteArray(" abcd.supabase.co ") << QByteArray("abcd");

    // Fully qualified names with a trailing dot.
    QTest::newRow("trailing dot") << QByteArray("realtime-dev.localhost.")
                                  << QByteArray("realtime-dev");
    QTest::newRow("trailing dot, port")
            << QByteArray("realtime-dev.localhost.:4000") << QByteArray("realtime-dev");

    // localhost and IP literals: the self-host tenant.
    QTest::newRow("localhost") << QByteArray("localhost") << SelfHost;
    QTest::newRow("localhost:4000") << QByteArray("localhost:4000") << SelfHost;
    QTest::newRow("LOCALHOST:4000") << QByteArray("LOCALHOST:4000") << SelfHost;
    QTest::newRow("localhost.") << QByteArray("localhost.") << SelfHost;
    QTest::newRow("localhost.:4000") << QByteArray("localhost.:4000") << SelfHost;
    QTest::newRow("127.0.0.1") << QByteArray("127.0.0.1") << SelfHost;
    QTest::newRow("127.0.0.1:4000") << QByteArray("127.0.0.1:4000") << SelfHost;
    QTest::newRow("10.1.2.3:80") << QByteArray("10.1.2.3:80") << SelfHost;
    QTest::newRow("0.0.0.0") << QByteArray("0.0.0.0") << SelfHost;
    QTest::newRow("::1") << QByteArray("::1") << SelfHost;
    QTest::newRow("[::1]") << QByteArray("[::1]") << SelfHost;
    QTest::newRow("[::1]:4000") << QByteArray("[::1]:4000") << SelfHost;
    QTest::newRow("2001:db8::1") << QByteArray("2001:db8::1") << SelfHost;
    QTest::newRow("[2001:DB8::1]:4000") << QByteArray("[2001:DB8::1]:4000") << SelfHost;
    QTest::newRow("[::ffff:127.0.0.1]:4000") << QByteArray("[::ffff:127.0.0.1]:4000") << SelfHost;

    // Names that merely start like an IP or localhost are ordinary hosts.
    QTest::newRow("localhost as first label")
            << QByteArray("localhost.example.com") << QByteArray("localhost");
    QTest::newRow("ip-like first label") << QByteArray("127.0.0.1.nip.io") << QByteArray("127");
    QTest::newRow("tenant named like localhost")
            << QByteArray("localhostx.supabase.co") << QByteArray("localhostx");

    // No host: no tenant.
    QTest::newRow("empty") << QByteArray() << QByteArray();
    QTest::newRow("blank") << QByteArray("   ") << QByteArray();
    QTest::newRow("port only") << QByteArray(":4000") << QByteArray();
    QTest::newRow("dot only") << QByteArray(".") << QByteArray();
}

void HostTest::tenantIdFromHost()
{
    QFETCH(QByteArray, host);
    QFETCH(QByteArray, expected);

    QCOMPARE(rt::tenants::tenantIdFromHost(host, SelfHost), expected);
}

QTEST_GUILESS_MAIN(HostTest)
#include "tst_host.moc"
