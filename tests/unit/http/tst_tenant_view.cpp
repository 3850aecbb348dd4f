#include "server/http/tenant_view.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace rt;

namespace {

tenants::Tenant sampleTenant()
{
    tenants::Tenant tenant;
    tenant.id = QStringLiteral("6f1c8d0a-3b6e-4a51-9a0e-1f4f2f6f7e10");
    tenant.externalId = "acme";
    tenant.name = QStringLiteral("Acme");
    tenant.jwtSecret = "very-secret";
    tenant.jwtJwks = R"({"keys":[]})";
    tenant.maxConcurrentUsers = 7;
    tenant.maxChannelsPerClient = 8;
    tenant.maxEventsPerSecond = 9;
    tenant.maxJoinsPerSecond = 10;
    tenant.maxBytesPerSecond = 11;
    tenant.maxPresenceEventsPerSecond = 12;
    tenant.maxPayloadSizeInKb = 13;
    tenant.clientPresenceWindowMs = 5000;
    tenant.privateOnly = true;
    tenant.suspend = true;
    tenant.insertedAt = QDateTime(QDate(2026, 5, 1), QTime(10, 0, 0, 789), Qt::UTC);
    tenants::Extension extension;
    extension.type = QStringLiteral("postgres_cdc_rls");
    extension.insertedAt = QDateTime(QDate(2026, 5, 1), QTime(10, 0, 1), Qt::UTC);
    extension.updatedAt = QDateTime(QDate(2026, 5, 2), QTime(11, 0, 2), Qt::UTC);
    extension.settings = QJsonObject{ { QStringLiteral("db_password"), QStringLiteral("plain") } };
    extension.storedSettings = QJsonObject{
        { QStringLiteral("db_host"), QStringLiteral("7Wwy/7hIGy35MCo8jeVy+w==") },
        { QStringLiteral("db_password"), QStringLiteral("v1QVng3N+pZd/0AEObABwg==") },
        { QStringLiteral("region"), QStringLiteral("us-east-1") },
        { QStringLiteral("poll_interval_ms"), 100 },
        { QStringLiteral("ssl_enforced"), false },
    };
    tenant.extensions.append(extension);
    return tenant;
}

} // namespace

class TenantViewTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void rendersExactlyUpstreamsKeys();
    void extensionKeysComeInUpstreamsOrder();
    void timestampsAreNaiveUtcSeconds();
    void dataWrappers();
};

void TenantViewTest::rendersExactlyUpstreamsKeys()
{
    const QByteArray json = http::renderTenant(sampleTenant());
    QJsonParseError error;
    const QJsonObject object = QJsonDocument::fromJson(json, &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);
    const QStringList keys{ QStringLiteral("client_presence_window_ms"),
                            QStringLiteral("extensions"),
                            QStringLiteral("external_id"),
                            QStringLiteral("id"),
                            QStringLiteral("inserted_at"),
                            QStringLiteral("max_channels_per_client"),
                            QStringLiteral("max_client_presence_events_per_window"),
                            QStringLiteral("max_concurrent_users"),
                            QStringLiteral("max_events_per_second"),
                            QStringLiteral("max_joins_per_second"),
                            QStringLiteral("name"),
                            QStringLiteral("presence_enabled"),
                            QStringLiteral("private_only") };
    QCOMPARE(object.keys(), keys);
    QCOMPARE(object.value(QLatin1String("external_id")).toString(), QStringLiteral("acme"));
    QCOMPARE(object.value(QLatin1String("max_concurrent_users")).toInt(), 7);
    QCOMPARE(object.value(QLatin1String("max_joins_per_second")).toInt(), 10);
    QVERIFY(object.value(QLatin1String("max_client_presence_events_per_window")).isNull());
    QCOMPARE(object.value(QLatin1String("client_presence_window_ms")).toInt(), 5000);
    QCOMPARE(object.value(QLatin1String("private_only")).toBool(), true);
    // Secrets never leave the server, nor does the plain database password.
    QVERIFY(!json.contains("very-secret"));
    QVERIFY(!json.contains("keys"));
    QVERIFY(!json.contains("plain"));
    QVERIFY(!json.contains("db_password"));
    const QJsonObject settings = object.value(QLatin1String("extensions"))
                                         .toArray()
                                         .at(0)
                                         .toObject()
                                         .value(QLatin1String("settings"))
                                         .toObject();
    QCOMPARE(settings.value(QLatin1String("db_host")).toString(),
             QStringLiteral("7Wwy/7hIGy35MCo8jeVy+w=="));
    QCOMPARE(settings.value(QLatin1String("poll_interval_ms")).toInt(), 100);
    QCOMPARE(settings.value(QLatin1String("ssl_enforced")), QJsonValue(false));
}

void TenantViewTest::extensionKeysComeInUpstreamsOrder()
{
    const QByteArray json = http::renderTenant(sampleTenant());
    const qsizetype start = json.indexOf("\"extensions\":[{");
    QVERIFY(start >= 0);
    const QByteArray extension = json.mid(start);
    QVERIFY(extension.startsWith("\"extensions\":[{\"type\":\"postgres_cdc_rls\","
                                 "\"inserted_at\":\"2026-05-01T10:00:01\","
                                 "\"updated_at\":\"2026-05-02T11:00:02\",\"settings\":{"));
    // Settings keys sorted by bytes.
    const qsizetype host = extension.indexOf("db_host");
    const qsizetype poll = extension.indexOf("poll_interval_ms");
    const qsizetype region = extension.indexOf("region");
    QVERIFY(host < poll && poll < region);
}

void TenantViewTest::timestampsAreNaiveUtcSeconds()
{
    QCOMPARE(http::naiveUtc(QDateTime(QDate(2026, 5, 1), QTime(10, 0, 0, 789), Qt::UTC)),
             QStringLiteral("2026-05-01T10:00:00"));
    // A local time is rendered in UTC.
    const QDateTime plusTwo(QDate(2026, 5, 1), QTime(12, 30, 5), Qt::OffsetFromUTC, 7200);
    QCOMPARE(http::naiveUtc(plusTwo), QStringLiteral("2026-05-01T10:30:05"));
    const QJsonObject object = QJsonDocument::fromJson(http::renderTenant(sampleTenant())).object();
    QCOMPARE(object.value(QLatin1String("inserted_at")).toString(),
             QStringLiteral("2026-05-01T10:00:00"));
}

void TenantViewTest::dataWrappers()
{
    const tenants::Tenant tenant = sampleTenant();
    const QJsonObject one = QJsonDocument::fromJson(http::renderTenantData(tenant)).object();
    QCOMPARE(one.value(QLatin1String("data")).toObject().value(QLatin1String("id")).toString(),
             tenant.id);
    const auto shared = std::make_shared<const tenants::Tenant>(tenant);
    const QJsonObject list =
            QJsonDocument::fromJson(http::renderTenantList({ shared, shared })).object();
    QCOMPARE(list.value(QLatin1String("data")).toArray().size(), 2);
    QCOMPARE(QJsonDocument::fromJson(http::renderTenantList({})).object(),
             QJsonObject({ { QStringLiteral("data"), QJsonArray() } }));
    // A tenant without extensions renders an empty list.
    tenants::Tenant bare = tenant;
    bare.extensions.clear();
    QVERIFY(http::renderTenant(bare).endsWith("\"extensions\":[]}"));
}

QTEST_GUILESS_MAIN(TenantViewTest)
#include "tst_tenant_view.moc"
