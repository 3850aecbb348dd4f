// The TenantDirectory's overrides layer: find()/all() give stored settings with the cluster
// configuration's overrides applied, findStored()/allStored() the stored rows; overrides apply
// and unapply, survive control-plane writes, and setLimitOverrides() reports exactly the tenants
// whose effective settings changed.
#include "server/tenants/tenant_directory.h"

#include <QTest>
#include <QThread>

#include <atomic>

using rt::tenants::LimitOverrides;
using rt::tenants::Tenant;
using rt::tenants::TenantDirectory;
using rt::tenants::TenantPtr;
using Change = rt::tenants::TenantDirectory::OverrideChange;

namespace {

TenantPtr tenant(const QByteArray &externalId, int maxEventsPerSecond = 100)
{
    auto value = std::make_shared<Tenant>();
    value->externalId = externalId;
    value->jwtSecret = "secret";
    value->maxConcurrentUsers = 200;
    value->maxEventsPerSecond = maxEventsPerSecond;
    value->maxJoinsPerSecond = 100;
    return value;
}

LimitOverrides eventsOverride(int eventsPerSecond)
{
    LimitOverrides overrides;
    overrides.maxEventsPerSecond = eventsPerSecond;
    return overrides;
}

LimitOverrides suspendOverride(bool suspend)
{
    LimitOverrides overrides;
    overrides.suspend = suspend;
    return overrides;
}

} // namespace

class DirectoryOverridesTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void overridesApplyAndUnapply();
    void storedViewIsUnchanged();
    void controlPlaneWritesKeepOverrides();
    void overridesWaitForTheirTenant();
    void reportsOnlyRealChanges();
    void suspensionAsksForDisconnects();
    void privateOnlyDisconnectsPresenceDoesNot();
    void noChangeKeepsTheStoredObject();
    void concurrentWritersDoNotLoseChanges();
};

void DirectoryOverridesTest::overridesApplyAndUnapply()
{
    TenantDirectory directory;
    directory.replaceAll({ tenant("a"), tenant("b") });
    QCOMPARE(directory.setLimitOverrides({ { "a", eventsOverride(5000) } }),
             (QList<Change>{ { "a", false } }));
    QCOMPARE(directory.find("a")->maxEventsPerSecond, 5000);
    QCOMPARE(directory.find("a")->maxConcurrentUsers, 200); // not overridden
    QCOMPARE(directory.find("b")->maxEventsPerSecond, 100);
    for (const TenantPtr &effective : directory.all()) {
        QCOMPARE(effective->maxEventsPerSecond, effective->externalId == "a" ? 5000 : 100);
    }
    QCOMPARE(directory.limitOverrides("a"), eventsOverride(5000));

    // Removing the override (the key was deleted or its lease expired) restores the stored value.
    QCOMPARE(directory.setLimitOverrides({}), (QList<Change>{ { "a", false } }));
    QCOMPARE(directory.find("a")->maxEventsPerSecond, 100);
    QVERIFY(directory.limitOverrides("a").isEmpty());
}

void DirectoryOverridesTest::storedViewIsUnchanged()
{
    TenantDirectory directory;
    const TenantPtr stored = tenant("a");
    directory.replaceAll({ stored });
    LimitOverrides overrides = eventsOverride(7);
    overrides.suspend = true;
    (void)directory.setLimitOverrides({ { "a", overrides } });
    QCOMPARE(directory.findStored("a"), stored); // the very object the control plane stored
    QCOMPARE(directory.findStored("a")->maxEventsPerSecond, 100);
    QVERIFY(!directory.findStored("a")->suspend);
    QCOMPARE(directory.allStored(), (QList<TenantPtr>{ stored }));
    QVERIFY(directory.find("a") != stored);
    QCOMPARE(directory.find("a")->maxEventsPerSecond, 7);
    QVERIFY(directory.find("a")->suspend);
    QCOMPARE(directory.size(), 1);
    QVERIFY(!directory.findStored("nobody"));
}

void DirectoryOverridesTest::controlPlaneWritesKeepOverrides()
{
    TenantDirectory directory;
    directory.replaceAll({ tenant("a") });
    (void)directory.setLimitOverrides({ { "a", eventsOverride(5000) } });

    // The tenant API changes another limit: the stored row changes, the override stays.
    TenantPtr written = tenant("a", 300);
    std::const_pointer_cast<Tenant>(written)->maxJoinsPerSecond = 42;
    directory.upsert(written);
    QCOMPARE(directory.find("a")->maxEventsPerSecond, 5000);
    QCOMPARE(directory.find("a")->maxJoinsPerSecond, 42);
    QCOMPARE(directory.findStored("a")->maxEventsPerSecond, 300);

    // A reload of every tenant keeps it too.
    directory.replaceAll({ tenant("a", 400), tenant("b") });
    QCOMPARE(directory.find("a")->maxEventsPerSecond, 5000);
    QCOMPARE(directory.findStored("a")->maxEventsPerSecond, 400);

    // Unapplying now falls back to the latest stored value, not the one of the first write.
    QCOMPARE(directory.setLimitOverrides({}), (QList<Change>{ { "a", false } }));
    QCOMPARE(directory.find("a")->maxEventsPerSecond, 400);

    // A deleted tenant is gone from both views.
    directory.remove("a");
    QVERIFY(!directory.find("a"));
    QVERIFY(!directory.findStored("a"));
}

void DirectoryOverridesTest::overridesWaitForTheirTenant()
{
    TenantDirectory directory;
    // The configuration may name a tenant this node has not loaded yet: nothing changes now...
    QVERIFY(directory.setLimitOverrides({ { "later", eventsOverride(9) } }).isEmpty());
    QVERIFY(!directory.find("later"));
    // ...and the override applies as soon as the tenant is created.
    directory.upsert(tenant("later"));
    QCOMPARE(directory.find("later")->maxEventsPerSecond, 9);
    directory.remove("later");
    directory.replaceAll({ tenant("later") });
    QCOMPARE(directory.find("later")->maxEventsPerSecond, 9);
}

void DirectoryOverridesTest::reportsOnlyRealChanges()
{
    TenantDirectory directory;
    directory.replaceAll({ tenant("a"), tenant("b"), tenant("c") });
    (void)directory.setLimitOverrides({ { "a", eventsOverride(1) }, { "b", eventsOverride(2) } });
    // Same overrides again: nothing to restart.
    QVERIFY(directory.setLimitOverrides({ { "a", eventsOverride(1) }, { "b", eventsOverride(2) } })
                    .isEmpty());
    // b changes, a goes, c gets one equal to its stored value (no effective change), and an
    // empty override is no override.
    const QList<Change> changes = directory.setLimitOverrides({
            { "b", eventsOverride(3) },
            { "c", eventsOverride(100) },
            { "d", LimitOverrides() },
    });
    QCOMPARE(changes, (QList<Change>{ { "a", false }, { "b", false } }));
    QCOMPARE(directory.find("a")->maxEventsPerSecond, 100);
    QCOMPARE(directory.find("b")->maxEventsPerSecond, 3);
    QCOMPARE(directory.find("c")->maxEventsPerSecond, 100);
}

void DirectoryOverridesTest::suspensionAsksForDisconnects()
{
    TenantDirectory directory;
    directory.replaceAll({ tenant("a"), tenant("b") });
    QCOMPARE(directory.setLimitOverrides({ { "a", suspendOverride(true) } }),
             (QList<Change>{ { "a", true } }));
    QVERIFY(directory.find("a")->suspend);
    // A limit change alongside an unchanged suspension: no disconnect for it.
    LimitOverrides both = suspendOverride(true);
    both.maxEventsPerSecond = 5;
    QCOMPARE(directory.setLimitOverrides({ { "a", both } }), (QList<Change>{ { "a", false } }));
    // Lifting the suspension disconnects too (like the control plane on a suspend change).
    QCOMPARE(directory.setLimitOverrides({}), (QList<Change>{ { "a", true } }));
    QVERIFY(!directory.find("a")->suspend);
}

void DirectoryOverridesTest::privateOnlyDisconnectsPresenceDoesNot()
{
    TenantDirectory directory;
    directory.replaceAll({ tenant("a"), tenant("b") });
    LimitOverrides privateOnly;
    privateOnly.privateOnly = true;
    // Public channels already joined must go, as after a control-plane change of private_only.
    QCOMPARE(directory.setLimitOverrides({ { "a", privateOnly } }),
             (QList<Change>{ { "a", true } }));
    QVERIFY(directory.find("a")->privateOnly);
    QVERIFY(!directory.findStored("a")->privateOnly);
    // presence_enabled applies to later joins: a change, but no disconnect.
    LimitOverrides presence;
    presence.presenceEnabled = true;
    QCOMPARE(directory.setLimitOverrides({ { "a", privateOnly }, { "b", presence } }),
             (QList<Change>{ { "b", false } }));
    QVERIFY(directory.find("b")->presenceEnabled);
    // Lifting private_only disconnects again; lifting presence_enabled does not.
    QCOMPARE(directory.setLimitOverrides({}), (QList<Change>{ { "a", true }, { "b", false } }));
    QVERIFY(!directory.find("a")->privateOnly);
    QVERIFY(!directory.find("b")->presenceEnabled);
}

void DirectoryOverridesTest::noChangeKeepsTheStoredObject()
{
    TenantDirectory directory;
    const TenantPtr stored = tenant("a");
    directory.replaceAll({ stored });
    QCOMPARE(directory.find("a"), stored);
    // An override equal to the stored values: the effective tenant is the stored object, so a
    // control-plane comparison of the directory with its database sees no difference.
    (void)directory.setLimitOverrides({ { "a", eventsOverride(100) } });
    QCOMPARE(directory.find("a"), stored);
}

void DirectoryOverridesTest::concurrentWritersDoNotLoseChanges()
{
    // The control plane (db thread) and the cluster configuration (cluster thread) write at the
    // same time; readers on workers read throughout. Neither writer's change may be lost.
    TenantDirectory directory;
    constexpr int Rounds = 2000;
    std::atomic<bool> done{ false };
    std::atomic<int> badReads{ 0 };
    QThread *reader = QThread::create([&] {
        while (!done.load()) {
            for (const TenantPtr &effective : directory.all()) {
                if (!effective || effective->maxConcurrentUsers != 200) {
                    badReads.fetch_add(1);
                }
            }
        }
    });
    QThread *controlPlane = QThread::create([&] {
        for (int i = 0; i < Rounds; ++i) {
            directory.upsert(tenant("t" + QByteArray::number(i % 50), 100 + i));
        }
    });
    QThread *cluster = QThread::create([&] {
        for (int i = 0; i < Rounds; ++i) {
            (void)directory.setLimitOverrides({ { "t7", eventsOverride(1 + i) } });
        }
    });
    reader->start();
    controlPlane->start();
    cluster->start();
    QVERIFY(controlPlane->wait(30'000));
    QVERIFY(cluster->wait(30'000));
    done.store(true);
    QVERIFY(reader->wait(30'000));
    delete reader;
    delete controlPlane;
    delete cluster;
    QCOMPARE(badReads.load(), 0);
    QCOMPARE(directory.size(), 50);
    QCOMPARE(directory.find("t7")->maxEventsPerSecond, Rounds);
    QCOMPARE(directory.findStored("t7")->maxEventsPerSecond, 100 + (Rounds - 50) + 7);
    QCOMPARE(directory.find("t8")->maxEventsPerSecond, 100 + (Rounds - 50) + 8);
}

QTEST_APPLESS_MAIN(DirectoryOverridesTest)
#include "tst_directory_overrides.moc"
