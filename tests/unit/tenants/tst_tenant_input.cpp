#include "server/tenants/tenant_input.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using rt::tenants::TenantInput;
using rt::tenants::tenantInputFromJson;
using rt::tenants::TenantInputResult;

namespace {

QJsonObject object(QByteArrayView json)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(json.toByteArray(), &error);
    if (error.error != QJsonParseError::NoError) {
        qWarning("bad JSON in test: %s", json.toByteArray().constData());
    }
    return document.object();
}

QByteArray compact(const QJsonObject &value)
{
    return QJsonDocument(value).toJson(QJsonDocument::Compact);
}

} // namespace

// Tests reading a tenant as an operator writes it (seed file, self-host seed): the fields of
// spec/server-protocol.md §9.1 and upstream's error shape {"field":["message", ...]}.
class TenantInputTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void minimalTenant();
    void everyField();
    void jwksAloneIsEnough();
    void nullsAreUnset();
    void invalidInput_data();
    void invalidInput();
};

void TenantInputTest::minimalTenant()
{
    const TenantInputResult result =
            tenantInputFromJson(object(R"({"external_id":"t1","jwt_secret":"s3cret"})"));
    QVERIFY(result.input.has_value());
    QCOMPARE(result.errors, QJsonObject());
    const TenantInput &input = *result.input;
    QCOMPARE(input.externalId, QByteArray("t1"));
    QCOMPARE(input.name, QStringLiteral("t1")); // name defaults to the external id
    QCOMPARE(input.jwtSecret, QByteArray("s3cret"));
    QVERIFY(input.jwtJwks.isEmpty());
    QVERIFY(!input.maxConcurrentUsers);
    QVERIFY(!input.maxEventsPerSecond);
    QVERIFY(!input.maxBytesPerSecond);
    QVERIFY(!input.maxChannelsPerClient);
    QVERIFY(!input.maxJoinsPerSecond);
    QVERIFY(!input.maxPresenceEventsPerSecond);
    QVERIFY(!input.maxPayloadSizeInKb);
    QVERIFY(!input.maxClientPresenceEventsPerWindow);
    QVERIFY(!input.clientPresenceWindowMs);
    QCOMPARE(input.suspend, false);
    QCOMPARE(input.privateOnly, false);
    QCOMPARE(input.presenceEnabled, false);
    QVERIFY(input.extensions.isEmpty());
}

void TenantInputTest::everyField()
{
    const TenantInputResult result = tenantInputFromJson(object(R"({
        "external_id": "acme",
        "name": "Acme Inc.",
        "jwt_secret": "s",
        "jwt_jwks": {"keys": [{"kty": "oct", "kid": "k1", "k": "c2VjcmV0"}]},
        "max_concurrent_users": 1,
        "max_events_per_second": 2,
        "max_bytes_per_second": 3,
        "max_channels_per_client": 4,
        "max_joins_per_second": 5,
        "max_presence_events_per_second": 6,
        "max_payload_size_in_kb": 7,
        "max_client_presence_events_per_window": 8,
        "client_presence_window_ms": 9,
        "suspend": true,
        "private_only": true,
        "presence_enabled": true,
        "extensions": [{"type": "postgres_cdc_rls",
                        "settings": {"db_host": "db", "db_port": "5432", "region": "eu"}}]
    })"));
    QCOMPARE(result.errors, QJsonObject());
    QVERIFY(result.input.has_value());
    const TenantInput &input = *result.input;
    QCOMPARE(input.externalId, QByteArray("acme"));
    QCOMPARE(input.name, QStringLiteral("Acme Inc."));
    QCOMPARE(object(input.jwtJwks),
             object(R"({"keys":[{"kty":"oct","kid":"k1","k":"c2VjcmV0"}]})"));
    QCOMPARE(input.maxConcurrentUsers, std::optional<int>(1));
    QCOMPARE(input.maxEventsPerSecond, std::optional<int>(2));
    QCOMPARE(input.maxBytesPerSecond, std::optional<int>(3));
    QCOMPARE(input.maxChannelsPerClient, std::optional<int>(4));
    QCOMPARE(input.maxJoinsPerSecond, std::optional<int>(5));
    QCOMPARE(input.maxPresenceEventsPerSecond, std::optional<int>(6));
    QCOMPARE(input.maxPayloadSizeInKb, std::optional<int>(7));
    QCOMPARE(input.maxClientPresenceEventsPerWindow, std::optional<int>(8));
    QCOMPARE(input.clientPresenceWindowMs, std::optional<int>(9));
    QVERIFY(input.suspend);
    QVERIFY(input.privateOnly);
    QVERIFY(input.presenceEnabled);
    QCOMPARE(input.extensions.size(), 1);
    QCOMPARE(input.extensions.constFirst().type, QStringLiteral("postgres_cdc_rls"));
    QCOMPARE(input.extensions.constFirst().settings,
             object(R"({"db_host":"db","db_port":"5432","region":"eu"})"));
}

void TenantInputTest::jwksAloneIsEnough()
{
    // jwt_secret or jwt_jwks is required (spec §9.1), not both.
    const TenantInputResult result =
            tenantInputFromJson(object(R"({"external_id":"t","jwt_jwks":{"keys":[]}})"));
    QCOMPARE(result.errors, QJsonObject());
    QVERIFY(result.input.has_value());
    QVERIFY(result.input->jwtSecret.isEmpty());
    QCOMPARE(object(result.input->jwtJwks), object(R"({"keys":[]})"));
}

void TenantInputTest::nullsAreUnset()
{
    const TenantInputResult result = tenantInputFromJson(
            object(R"({"external_id":"t","jwt_secret":"s","jwt_jwks":null,)"
                   R"("max_concurrent_users":null,"suspend":null,"extensions":null,"name":null})"));
    QCOMPARE(result.errors, QJsonObject());
    QVERIFY(result.input.has_value());
    QVERIFY(!result.input->maxConcurrentUsers);
    QCOMPARE(result.input->suspend, false);
    QVERIFY(result.input->extensions.isEmpty());
    QCOMPARE(result.input->name, QStringLiteral("t"));
}

void TenantInputTest::invalidInput_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QByteArray>("errors");

    QTest::newRow("empty object")
            << QByteArray("{}")
            << QByteArray(R"({"external_id":["can't be blank"],"jwt_secret":["can't be blank"]})");
    QTest::newRow("empty external_id") << QByteArray(R"({"external_id":"","jwt_secret":"s"})")
                                       << QByteArray(R"({"external_id":["can't be blank"]})");
    QTest::newRow("blank external_id") << QByteArray(R"({"external_id":"  ","jwt_secret":"s"})")
                                       << QByteArray(R"({"external_id":["can't be blank"]})");
    QTest::newRow("null external_id") << QByteArray(R"({"external_id":null,"jwt_secret":"s"})")
                                      << QByteArray(R"({"external_id":["can't be blank"]})");
    // The external id is the first DNS label of the Host header (§1.3): it cannot have a dot.
    QTest::newRow("dotted external_id") << QByteArray(R"({"external_id":"a.b","jwt_secret":"s"})")
                                        << QByteArray(R"({"external_id":["is invalid"]})");
    QTest::newRow("no secret and no jwks") << QByteArray(R"({"external_id":"t"})")
                                           << QByteArray(R"({"jwt_secret":["can't be blank"]})");
    QTest::newRow("empty secret") << QByteArray(R"({"external_id":"t","jwt_secret":""})")
                                  << QByteArray(R"({"jwt_secret":["can't be blank"]})");
    QTest::newRow("secret not a string") << QByteArray(R"({"external_id":"t","jwt_secret":5})")
                                         << QByteArray(R"({"jwt_secret":["is invalid"]})");
    QTest::newRow("jwks without keys array")
            << QByteArray(R"({"external_id":"t","jwt_jwks":{"keys":"x"}})")
            << QByteArray(R"({"jwt_jwks":["is invalid"]})");
    QTest::newRow("jwks not an object")
            << QByteArray(R"({"external_id":"t","jwt_secret":"s","jwt_jwks":"{}"})")
            << QByteArray(R"({"jwt_jwks":["is invalid"]})");
    QTest::newRow("negative limit")
            << QByteArray(R"({"external_id":"t","jwt_secret":"s","max_concurrent_users":-1})")
            << QByteArray(R"({"max_concurrent_users":["is invalid"]})");
    QTest::newRow("fractional limit")
            << QByteArray(R"({"external_id":"t","jwt_secret":"s","max_joins_per_second":1.5})")
            << QByteArray(R"({"max_joins_per_second":["is invalid"]})");
    QTest::newRow("huge limit") << QByteArray(
            R"({"external_id":"t","jwt_secret":"s","max_payload_size_in_kb":1e12})")
                                << QByteArray(R"({"max_payload_size_in_kb":["is invalid"]})");
    QTest::newRow("limit is an object")
            << QByteArray(R"({"external_id":"t","jwt_secret":"s","client_presence_window_ms":{}})")
            << QByteArray(R"({"client_presence_window_ms":["is invalid"]})");
    QTest::newRow("boolean is a word")
            << QByteArray(R"({"external_id":"t","jwt_secret":"s","suspend":"yes"})")
            << QByteArray(R"({"suspend":["is invalid"]})");
    QTest::newRow("boolean is a number")
            << QByteArray(R"({"external_id":"t","jwt_secret":"s","private_only":2})")
            << QByteArray(R"({"private_only":["is invalid"]})");
    QTest::newRow("extensions not a list")
            << QByteArray(R"({"external_id":"t","jwt_secret":"s","extensions":{}})")
            << QByteArray(R"({"extensions":["is invalid"]})");
    QTest::newRow("extension without settings")
            << QByteArray(R"({"external_id":"t","jwt_secret":"s",)"
                          R"("extensions":[{"type":"postgres_cdc_rls"}]})")
            << QByteArray(R"({"extensions":["is invalid"]})");
    QTest::newRow("extension without type")
            << QByteArray(R"({"external_id":"t","jwt_secret":"s","extensions":[{"settings":{}}]})")
            << QByteArray(R"({"extensions":["is invalid"]})");
    // Every error is reported at once, one key per field.
    QTest::newRow("several fields")
            << QByteArray(R"({"external_id":"","jwt_secret":5,"suspend":"x",)"
                          R"("max_events_per_second":-5})")
            << QByteArray(R"({"external_id":["can't be blank"],"jwt_secret":["is invalid"],)"
                          R"("max_events_per_second":["is invalid"],"suspend":["is invalid"]})");
}

void TenantInputTest::invalidInput()
{
    QFETCH(QByteArray, json);
    QFETCH(QByteArray, errors);

    const TenantInputResult result = tenantInputFromJson(object(json));
    QVERIFY(!result.input.has_value());
    QCOMPARE(compact(result.errors), compact(object(errors)));
    // The shape is {"field":["message", ...]}: each value a non-empty list of strings.
    for (auto it = result.errors.constBegin(); it != result.errors.constEnd(); ++it) {
        QVERIFY(it.value().isArray());
        QVERIFY(!it.value().toArray().isEmpty());
        QVERIFY(it.value().toArray().at(0).isString());
    }
}

QTEST_GUILESS_MAIN(TenantInputTest)
#include "tst_tenant_input.moc"
