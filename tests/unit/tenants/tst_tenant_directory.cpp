#include "server/tenants/tenant_directory.h"

#include <QTest>
#include <QThread>

#include <atomic>
#include <memory>
#include <vector>

using rt::tenants::Tenant;
using rt::tenants::TenantDirectory;
using rt::tenants::TenantPtr;
using rt::tenants::TenantUsageRegistry;

namespace {

TenantPtr tenant(const QByteArray &externalId, const QByteArray &secret = "s")
{
    auto value = std::make_shared<Tenant>();
    value->externalId = externalId;
    value->jwtSecret = secret;
    return value;
}

} // namespace

// Tests the node's tenant table: immutable snapshots readable from any thread while the control
// plane publishes new ones, and the per-tenant usage counters.
class TenantDirectoryTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void startsEmpty();
    void replaceAllSwapsTheWholeSet();
    void upsertAndRemove();
    void readersKeepTheirSnapshot();
    void concurrentReadersAndWriter();
    void usageIsSharedPerTenant();
};

void TenantDirectoryTest::startsEmpty()
{
    const TenantDirectory directory;
    QCOMPARE(directory.size(), 0);
    QVERIFY(directory.all().isEmpty());
    QVERIFY(!directory.find("anything"));
}

void TenantDirectoryTest::replaceAllSwapsTheWholeSet()
{
    TenantDirectory directory;
    directory.replaceAll({ tenant("a"), tenant("b") });
    QCOMPARE(directory.size(), 2);
    directory.replaceAll({ tenant("c") });
    QCOMPARE(directory.size(), 1);
    QVERIFY(!directory.find("a"));
    QVERIFY(directory.find("c"));
    // The same id twice: the last one wins.
    directory.replaceAll({ tenant("d", "1"), tenant("d", "2") });
    QCOMPARE(directory.size(), 1);
    QCOMPARE(directory.find("d")->jwtSecret, QByteArray("2"));
}

void TenantDirectoryTest::upsertAndRemove()
{
    TenantDirectory directory;
    directory.upsert(tenant("a", "1"));
    directory.upsert(tenant("b"));
    directory.upsert(tenant("a", "2"));
    QCOMPARE(directory.size(), 2);
    QCOMPARE(directory.find("a")->jwtSecret, QByteArray("2"));
    directory.remove("a");
    directory.remove("missing");
    QCOMPARE(directory.size(), 1);
    QVERIFY(!directory.find("a"));
    QVERIFY(directory.find("b"));
}

void TenantDirectoryTest::readersKeepTheirSnapshot()
{
    TenantDirectory directory;
    directory.replaceAll({ tenant("a", "1"), tenant("b") });
    const QList<TenantPtr> before = directory.all();
    const TenantPtr a = directory.find("a");
    directory.upsert(tenant("a", "2"));
    directory.remove("b");
    QCOMPARE(before.size(), 2);
    QCOMPARE(a->jwtSecret, QByteArray("1"));
    QCOMPARE(directory.find("a")->jwtSecret, QByteArray("2"));
}

void TenantDirectoryTest::concurrentReadersAndWriter()
{
    // Readers on worker threads look tenants up while the control plane publishes changes; each
    // lookup sees either the old or the new tenant, never a torn one.
    TenantDirectory directory;
    directory.replaceAll({ tenant("t", "0") });
    std::atomic<bool> stop{ false };
    std::atomic<int> bad{ 0 };
    std::vector<std::unique_ptr<QThread>> readers;
    for (int i = 0; i < 3; ++i) {
        readers.emplace_back(QThread::create([&] {
            while (!stop.load()) {
                const TenantPtr found = directory.find("t");
                if (!found || found->externalId != "t" || found->jwtSecret.isEmpty()) {
                    bad.fetch_add(1);
                }
                if (directory.size() < 1) {
                    bad.fetch_add(1);
                }
            }
        }));
        readers.back()->start();
    }
    for (int i = 1; i <= 2000; ++i) {
        directory.upsert(tenant("t", QByteArray::number(i)));
        if (i % 3 == 0) {
            directory.replaceAll({ tenant("t", QByteArray::number(i)), tenant("other") });
        }
    }
    stop.store(true);
    for (const auto &reader : readers) {
        QVERIFY(reader->wait(10000));
    }
    QCOMPARE(bad.load(), 0);
    QCOMPARE(directory.find("t")->jwtSecret, QByteArray("2000"));
}

void TenantDirectoryTest::usageIsSharedPerTenant()
{
    TenantUsageRegistry registry;
    const auto a = registry.usage("a");
    const auto again = registry.usage("a");
    const auto b = registry.usage("b");
    QCOMPARE(a.get(), again.get());
    QVERIFY(a.get() != b.get());
    a->connectedUsers.fetch_add(2);
    QCOMPARE(again->connectedUsers.load(), 2);
    QCOMPARE(b->connectedUsers.load(), 0);
}

QTEST_GUILESS_MAIN(TenantDirectoryTest)
#include "tst_tenant_directory.moc"
