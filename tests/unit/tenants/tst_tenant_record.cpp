#include "server/tenants/tenant_record.h"
#include "tests/support/tenants/tenant_fixtures.h"

#include <QJsonArray>
#include <QTest>

using namespace rt::tenants;

namespace {

TenantDefaults defaults()
{
    return rt::testsupport::customDefaults();
}

PatchContext context(bool replace = false)
{
    PatchContext c;
    c.replace = replace;
    c.externalId = "acme";
    c.newId = QStringLiteral("new-id");
    c.now = QDateTime(QDate(2026, 12, 1), QTime(20, 0, 0), Qt::UTC);
    return c;
}

Tenant stored()
{
    Tenant t;
    t.id = QStringLiteral("old-id");
    t.externalId = "acme";
    t.name = QStringLiteral("Acme");
    t.jwtSecret = "secret";
    t.maxConcurrentUsers = 500;
    t.maxEventsPerSecond = 50;
    t.clientPresenceWindowMs = 1000;
    t.historySize = 7;
    t.historyTtlSeconds = 0;
    t.suspend = true;
    t.insertedAt = QDateTime(QDate(2026, 1, 1), QTime(0, 0, 0), Qt::UTC);
    t.extensions = { Extension{ QStringLiteral("postgres_cdc_rls"), {}, {}, {}, {} } };
    return t;
}

} // namespace

// The pure half of the control plane's write: what a patch makes of a record (tenant API
// creates and updates, seed replaces) and the one table of written columns.
class TenantRecordTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void apiCreateUsesDefaultsAndTheExternalIdAsName();
    void replaceStartsOverKeepingIdAndInsertedAt();
    void updateKeepsWhatThePatchLeavesOut();
    void aRecordWithoutSecretOrJwksIsRefused();
    void columnsBindEveryWrittenField();
};

void TenantRecordTest::apiCreateUsesDefaultsAndTheExternalIdAsName()
{
    TenantPatch patch;
    patch.name = QStringLiteral("ignored on create");
    patch.jwtSecret = QByteArray("s");
    patch.maxEventsPerSecond = 99;
    patch.extensions = QList<Extension>{ Extension{ QStringLiteral("postgres"), {}, {}, {}, {} } };
    const auto created = applyPatch(nullptr, patch, defaults(), context());
    QVERIFY(created.ok());
    QCOMPARE(created->id, QStringLiteral("new-id"));
    QCOMPARE(created->externalId, QByteArray("acme"));
    QCOMPARE(created->name, QStringLiteral("acme")); // upstream forces it
    QCOMPARE(created->maxConcurrentUsers, 11);
    QCOMPARE(created->maxEventsPerSecond, 99);
    QCOMPARE(created->maxPayloadSizeInKb, 17);
    QCOMPARE(created->historySize, 100); // the documented defaults
    QCOMPARE(created->historyTtlSeconds, 120);
    QCOMPARE(created->insertedAt, context().now);
    QCOMPARE(created->updatedAt, context().now);
    QCOMPARE(created->extensions.size(), 1);
    QCOMPARE(created->extensions.at(0).type, QStringLiteral("postgres_cdc_rls")); // the alias
}

void TenantRecordTest::replaceStartsOverKeepingIdAndInsertedAt()
{
    const Tenant before = stored();
    TenantPatch patch;
    patch.name = QStringLiteral("Seeded");
    patch.jwtJwks = QByteArray(R"({"keys":[]})");
    const auto replaced = applyPatch(&before, patch, defaults(), context(true));
    QVERIFY(replaced.ok());
    QCOMPARE(replaced->id, QStringLiteral("old-id"));
    QCOMPARE(replaced->insertedAt, before.insertedAt);
    QCOMPARE(replaced->name, QStringLiteral("Seeded"));
    QCOMPARE(replaced->jwtSecret, QByteArray()); // not kept: the seed is the whole record
    QCOMPARE(replaced->maxConcurrentUsers, 11);
    QCOMPARE(replaced->suspend, false);
    QVERIFY(replaced->extensions.isEmpty());
}

void TenantRecordTest::updateKeepsWhatThePatchLeavesOut()
{
    const Tenant before = stored();
    TenantPatch patch;
    patch.name = QStringLiteral("Renamed");
    patch.clientPresenceWindowMs = std::optional<int>(); // present, null: cleared
    patch.suspend = false;
    const auto updated = applyPatch(&before, patch, defaults(), context());
    QVERIFY(updated.ok());
    QCOMPARE(updated->id, QStringLiteral("old-id"));
    QCOMPARE(updated->name, QStringLiteral("Renamed"));
    QCOMPARE(updated->jwtSecret, QByteArray("secret"));
    QCOMPARE(updated->maxConcurrentUsers, 500);
    QCOMPARE(updated->clientPresenceWindowMs, std::optional<int>());
    QCOMPARE(updated->suspend, false);
    QCOMPARE(updated->extensions.size(), 1); // extensions only change when given
    QCOMPARE(updated->insertedAt, before.insertedAt);
    QCOMPARE(updated->updatedAt, context().now);
    QVERIFY(storedDiffer(before, *updated));
    QVERIFY(credentialsDiffer(before, *updated)); // suspend changed
    QVERIFY(!storedDiffer(*updated, *updated));
}

void TenantRecordTest::aRecordWithoutSecretOrJwksIsRefused()
{
    const Tenant before = stored();
    TenantPatch patch;
    patch.jwtSecret = QByteArray(); // cleared, and no JWKS
    const auto refused = applyPatch(&before, patch, defaults(), context());
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error(),
             QJsonObject({ { QStringLiteral("jwt_secret"),
                             QJsonArray{ QStringLiteral(
                                     "either jwt_secret or jwt_jwks must be provided") } } }));
    QVERIFY(!applyPatch(nullptr, TenantPatch{}, defaults(), context()).ok());
}

void TenantRecordTest::columnsBindEveryWrittenField()
{
    Tenant record = stored();
    record.updatedAt = context().now;
    record.featureFlags = QJsonObject{ { QStringLiteral("a"), true } };
    const auto encrypt = [](QLatin1StringView column, const QByteArray &plain) -> QByteArray {
        return QByteArray(column.data(), column.size()) + ":enc(" + plain + ")";
    };
    QList<QByteArray> names;
    QHash<QByteArray, QVariant> values;
    for (const TenantColumn &column : writtenTenantColumns()) {
        const QByteArray name(column.name.data(), column.name.size());
        names.append(name);
        values.insert(name, column.value(record, encrypt));
    }
    QCOMPARE(names,
             QList<QByteArray>({ "name",
                                 "jwt_secret",
                                 "jwt_jwks",
                                 "max_concurrent_users",
                                 "max_events_per_second",
                                 "max_bytes_per_second",
                                 "max_channels_per_client",
                                 "max_joins_per_second",
                                 "max_presence_events_per_second",
                                 "max_payload_size_in_kb",
                                 "max_client_presence_events_per_window",
                                 "client_presence_window_ms",
                                 "history_size",
                                 "history_ttl_seconds",
                                 "suspend",
                                 "private_only",
                                 "presence_enabled",
                                 "postgres_cdc_default",
                                 "migrations_ran",
                                 "broadcast_adapter",
                                 "feature_flags",
                                 "updated_at" }));
    QCOMPARE(values.value("jwt_secret").toString(), QStringLiteral("jwt_secret:enc(secret)"));
    QVERIFY(values.value("jwt_jwks").isNull()); // empty: NULL
    QCOMPARE(values.value("max_concurrent_users").toInt(), 500);
    QVERIFY(values.value("max_client_presence_events_per_window").isNull());
    QCOMPARE(values.value("client_presence_window_ms").toInt(), 1000);
    QCOMPARE(values.value("history_size").toInt(), 7);
    QCOMPARE(values.value("history_ttl_seconds").toInt(), 0);
    QCOMPARE(values.value("suspend").toBool(), true);
    QCOMPARE(values.value("feature_flags").toString(), QStringLiteral(R"({"a":true})"));
    QCOMPARE(values.value("updated_at").toString(), QStringLiteral("2026-12-01T20:00:00Z"));
}

QTEST_GUILESS_MAIN(TenantRecordTest)
#include "tst_tenant_record.moc"
