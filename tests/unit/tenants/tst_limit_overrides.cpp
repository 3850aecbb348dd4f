// The values of tenant_limits.<id> and tenant_flags.<id> (cluster configuration): what parses,
// what is refused with which message, and how overrides combine with a stored tenant.
#include "server/tenants/limit_overrides.h"

#include <QJsonDocument>
#include <QTest>

using rt::tenants::applyOverrides;
using rt::tenants::LimitOverrides;
using rt::tenants::mergeOverrides;
using rt::tenants::overridableSettings;
using rt::tenants::overridesChange;
using rt::tenants::overridesToJson;
using rt::tenants::parseLimitOverrides;
using rt::tenants::parseTenantFlags;
using rt::tenants::Tenant;

namespace {

Tenant storedTenant()
{
    Tenant tenant;
    tenant.externalId = "acme";
    tenant.maxConcurrentUsers = 200;
    tenant.maxEventsPerSecond = 100;
    tenant.maxBytesPerSecond = 100'000;
    tenant.maxChannelsPerClient = 100;
    tenant.maxJoinsPerSecond = 100;
    tenant.maxPresenceEventsPerSecond = 1000;
    tenant.maxPayloadSizeInKb = 3000;
    return tenant;
}

} // namespace

class LimitOverridesTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesEveryLimit();
    void emptyObjectIsNoOverride();
    void refusesBadValues_data();
    void refusesBadValues();
    void parsesFlags();
    void refusesBadFlags_data();
    void refusesBadFlags();
    void applyReplacesOnlySetFields();
    void mergeLetsTheSecondWin();
    void changeDetection();
    void jsonRoundTrip();
};

void LimitOverridesTest::parsesEveryLimit()
{
    const auto parsed = parseLimitOverrides(
            R"({"max_concurrent_users": 500, "max_events_per_second": 1000,
                "max_bytes_per_second": 2000000, "max_channels_per_client": 7,
                "max_joins_per_second": 50, "max_presence_events_per_second": 20,
                "max_payload_size_in_kb": 2.0})");
    QVERIFY2(parsed.ok(), qPrintable(parsed ? QString() : parsed.error().message));
    QCOMPARE(parsed->maxConcurrentUsers, 500);
    QCOMPARE(parsed->maxEventsPerSecond, 1000);
    QCOMPARE(parsed->maxBytesPerSecond, 2'000'000);
    QCOMPARE(parsed->maxChannelsPerClient, 7);
    QCOMPARE(parsed->maxJoinsPerSecond, 50);
    QCOMPARE(parsed->maxPresenceEventsPerSecond, 20);
    QCOMPARE(parsed->maxPayloadSizeInKb, 2); // 2.0 is the integer 2
    QVERIFY(!parsed->suspend);

    const auto one = parseLimitOverrides(R"({"max_joins_per_second": 3})");
    QVERIFY(one.ok());
    LimitOverrides expected;
    expected.maxJoinsPerSecond = 3;
    QCOMPARE(*one, expected);
}

void LimitOverridesTest::emptyObjectIsNoOverride()
{
    const auto parsed = parseLimitOverrides("{}");
    QVERIFY(parsed.ok());
    QVERIFY(parsed->isEmpty());
}

void LimitOverridesTest::refusesBadValues_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("messagePart");
    QTest::newRow("not json") << QByteArray("{max_events") << QStringLiteral("not valid JSON");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("not valid JSON");
    QTest::newRow("array") << QByteArray("[1]") << QStringLiteral("must be a JSON object");
    QTest::newRow("unknown field")
            << QByteArray(R"({"max_events_per_second": 5, "max_event_per_second": 5})")
            << QStringLiteral("unknown field \"max_event_per_second\"");
    QTest::newRow("zero") << QByteArray(R"({"max_events_per_second": 0})")
                          << QStringLiteral("max_events_per_second must be a positive integer");
    QTest::newRow("negative") << QByteArray(R"({"max_concurrent_users": -1})")
                              << QStringLiteral("max_concurrent_users must be a positive integer");
    QTest::newRow("fraction") << QByteArray(R"({"max_joins_per_second": 2.5})")
                              << QStringLiteral("not 2.5");
    QTest::newRow("string") << QByteArray(R"({"max_joins_per_second": "10"})")
                            << QStringLiteral("not a string");
    QTest::newRow("null") << QByteArray(R"({"max_joins_per_second": null})")
                          << QStringLiteral("not null");
    QTest::newRow("too big") << QByteArray(R"({"max_bytes_per_second": 3000000000})")
                             << QStringLiteral("at most 2147483647");
    QTest::newRow("flag in limits")
            << QByteArray(R"({"suspend": true})") << QStringLiteral("unknown field \"suspend\"");
}

void LimitOverridesTest::refusesBadValues()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, messagePart);
    const auto parsed = parseLimitOverrides(json);
    QVERIFY(!parsed.ok());
    QVERIFY2(parsed.error().message.contains(messagePart), qPrintable(parsed.error().message));
}

void LimitOverridesTest::parsesFlags()
{
    const auto on = parseTenantFlags(R"({"suspend": true})");
    QVERIFY(on.ok());
    QCOMPARE(on->suspend, true);
    QVERIFY(!on->maxConcurrentUsers);
    const auto off = parseTenantFlags(R"({"suspend": false})");
    QVERIFY(off.ok());
    QCOMPARE(off->suspend, false);
    const auto none = parseTenantFlags("{}");
    QVERIFY(none.ok());
    QVERIFY(none->isEmpty());
    const auto all = parseTenantFlags(
            R"({"private_only": true, "presence_enabled": false, "suspend": false})");
    QVERIFY2(all.ok(), qPrintable(all.ok() ? QString() : all.error().message));
    QCOMPARE(all->privateOnly, true);
    QCOMPARE(all->presenceEnabled, false);
    QCOMPARE(all->suspend, false);
    const auto onlyPrivate = parseTenantFlags(R"({"private_only": true})");
    QVERIFY(onlyPrivate.ok());
    QCOMPARE(onlyPrivate->privateOnly, true);
    QVERIFY(!onlyPrivate->suspend);
    QVERIFY(!onlyPrivate->presenceEnabled);
}

void LimitOverridesTest::refusesBadFlags_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("messagePart");
    QTest::newRow("number") << QByteArray(R"({"suspend": 1})")
                            << QStringLiteral("suspend must be a boolean, not a number");
    QTest::newRow("string") << QByteArray(R"({"suspend": "true"})")
                            << QStringLiteral("suspend must be a boolean, not a string");
    QTest::newRow("limit in flags")
            << QByteArray(R"({"max_events_per_second": 5})")
            << QStringLiteral(
                       "unknown field \"max_events_per_second\" (known: suspend, private_only, "
                       "presence_enabled)");
    QTest::newRow("private_only null")
            << QByteArray(R"({"private_only": null})")
            << QStringLiteral("private_only must be a boolean, not null");
    QTest::newRow("presence_enabled number")
            << QByteArray(R"({"presence_enabled": 0})")
            << QStringLiteral("presence_enabled must be a boolean, not a number");
    QTest::newRow("scalar") << QByteArray("true") << QStringLiteral("JSON");
}

void LimitOverridesTest::refusesBadFlags()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, messagePart);
    const auto parsed = parseTenantFlags(json);
    QVERIFY(!parsed.ok());
    QVERIFY2(parsed.error().message.contains(messagePart), qPrintable(parsed.error().message));
}

void LimitOverridesTest::applyReplacesOnlySetFields()
{
    LimitOverrides overrides;
    overrides.maxEventsPerSecond = 5000;
    overrides.maxPayloadSizeInKb = 10;
    overrides.suspend = true;
    const Tenant stored = storedTenant();
    const Tenant effective = applyOverrides(stored, overrides);
    QCOMPARE(effective.maxEventsPerSecond, 5000);
    QCOMPARE(effective.maxPayloadSizeInKb, 10);
    QCOMPARE(effective.maxPayloadBytes(), 10 * 1000 + 500);
    QVERIFY(effective.suspend);
    // Everything else is the stored tenant's.
    QCOMPARE(effective.externalId, stored.externalId);
    QCOMPARE(effective.maxConcurrentUsers, stored.maxConcurrentUsers);
    QCOMPARE(effective.maxBytesPerSecond, stored.maxBytesPerSecond);
    QCOMPARE(effective.maxChannelsPerClient, stored.maxChannelsPerClient);
    QCOMPARE(effective.maxJoinsPerSecond, stored.maxJoinsPerSecond);
    QCOMPARE(effective.maxPresenceEventsPerSecond, stored.maxPresenceEventsPerSecond);
    // No override: the same settings.
    QCOMPARE(overridableSettings(applyOverrides(stored, {})), overridableSettings(stored));
    // suspend = false un-suspends a stored suspension.
    Tenant suspended = storedTenant();
    suspended.suspend = true;
    LimitOverrides resume;
    resume.suspend = false;
    QVERIFY(!applyOverrides(suspended, resume).suspend);
    // The other flags replace the stored ones in both directions, and only where set.
    LimitOverrides flags;
    flags.privateOnly = true;
    flags.presenceEnabled = true;
    const Tenant flagged = applyOverrides(stored, flags);
    QVERIFY(flagged.privateOnly);
    QVERIFY(flagged.presenceEnabled);
    QCOMPARE(flagged.suspend, stored.suspend);
    LimitOverrides unflag;
    unflag.privateOnly = false;
    const Tenant unflagged = applyOverrides(flagged, unflag);
    QVERIFY(!unflagged.privateOnly);
    QVERIFY(unflagged.presenceEnabled);
}

void LimitOverridesTest::mergeLetsTheSecondWin()
{
    LimitOverrides limits;
    limits.maxEventsPerSecond = 10;
    limits.maxJoinsPerSecond = 20;
    LimitOverrides more;
    more.maxJoinsPerSecond = 30;
    more.suspend = true;
    const LimitOverrides merged = mergeOverrides(limits, more);
    QCOMPARE(merged.maxEventsPerSecond, 10);
    QCOMPARE(merged.maxJoinsPerSecond, 30);
    QCOMPARE(merged.suspend, true);
    QVERIFY(!merged.maxConcurrentUsers);
    LimitOverrides flags;
    flags.privateOnly = true;
    flags.presenceEnabled = false;
    LimitOverrides later;
    later.presenceEnabled = true;
    const LimitOverrides mergedFlags = mergeOverrides(flags, later);
    QCOMPARE(mergedFlags.privateOnly, true);
    QCOMPARE(mergedFlags.presenceEnabled, true);
}

void LimitOverridesTest::changeDetection()
{
    const Tenant stored = storedTenant();
    LimitOverrides same;
    same.maxEventsPerSecond = stored.maxEventsPerSecond;
    same.suspend = false;
    QVERIFY(!overridesChange(stored, same));
    QVERIFY(!overridesChange(stored, {}));
    LimitOverrides other;
    other.maxConcurrentUsers = stored.maxConcurrentUsers + 1;
    QVERIFY(overridesChange(stored, other));
    LimitOverrides suspend;
    suspend.suspend = true;
    QVERIFY(overridesChange(stored, suspend));
    LimitOverrides privateOnly;
    privateOnly.privateOnly = !stored.privateOnly;
    QVERIFY(overridesChange(stored, privateOnly));
    privateOnly.privateOnly = stored.privateOnly;
    QVERIFY(!overridesChange(stored, privateOnly));
    LimitOverrides presence;
    presence.presenceEnabled = !stored.presenceEnabled;
    QVERIFY(overridesChange(stored, presence));
    QVERIFY(overridableSettings(stored) != overridableSettings(applyOverrides(stored, presence)));
}

void LimitOverridesTest::jsonRoundTrip()
{
    LimitOverrides overrides;
    overrides.maxConcurrentUsers = 1;
    overrides.maxPresenceEventsPerSecond = 2;
    const QJsonObject json = overridesToJson(overrides);
    QCOMPARE(json.size(), 2);
    QCOMPARE(json.value(QLatin1String("max_concurrent_users")).toInt(), 1);
    const auto reparsed = parseLimitOverrides(QJsonDocument(json).toJson());
    QVERIFY(reparsed.ok());
    QCOMPARE(*reparsed, overrides);
    LimitOverrides flags;
    flags.suspend = false;
    QCOMPARE(overridesToJson(flags), (QJsonObject{ { QStringLiteral("suspend"), false } }));
    flags.privateOnly = true;
    flags.presenceEnabled = false;
    const QJsonObject flagsJson = overridesToJson(flags);
    QCOMPARE(flagsJson,
             (QJsonObject{ { QStringLiteral("suspend"), false },
                           { QStringLiteral("private_only"), true },
                           { QStringLiteral("presence_enabled"), false } }));
    const auto reparsedFlags = parseTenantFlags(QJsonDocument(flagsJson).toJson());
    QVERIFY(reparsedFlags.ok());
    QCOMPARE(*reparsedFlags, flags);
}

QTEST_APPLESS_MAIN(LimitOverridesTest)
#include "tst_limit_overrides.moc"
