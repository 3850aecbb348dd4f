#include "server/tenants/tenant_input.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using rt::tenants::Extension;
using rt::tenants::parseTenantPatch;
using rt::tenants::TenantInput;
using rt::tenants::tenantInputFromJson;
using rt::tenants::TenantInputResult;
using rt::tenants::TenantPatch;
using rt::tenants::TenantPatchResult;

Q_DECLARE_METATYPE(rt::tenants::TenantWriteBody::Status)

namespace {

// JSON written with ` for " (readable in C++ strings, and no raw literals for moc to trip on).
QJsonObject json(const char *text)
{
    QByteArray bytes(text);
    bytes.replace('`', '"');
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        qWarning("bad JSON in test: %s", bytes.constData());
    }
    return document.object();
}

QByteArray compact(const QJsonObject &value)
{
    return QJsonDocument(value).toJson(QJsonDocument::Compact);
}

// The settings of a valid postgres_cdc_rls extension.
const char *const DatabaseSettings =
        "{`region`:`eu`,`db_host`:`h`,`db_port`:`5432`,`db_name`:`n`,`db_user`:`u`,"
        "`db_password`:`p`}";

} // namespace

// Tests reading tenant objects with upstream's casting rules and 422 shapes
// (docs/upstream/tenants-limits-metrics.md §3): parseTenantPatch() for the tenant API, where an
// absent field is "leave as is", and tenantInputFromJson() for seeds, where the tenant is whole.
class TenantInputTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void floatLiteralsAreFoundInTheRawBody();
    void writeBodies_data();
    void writeBodies();
    // parseTenantPatch
    void emptyPatchChangesNothing();
    void everyFieldIsRead();
    void castingRules_data();
    void castingRules();
    void nullsAndBlanks();
    void databaseExtensionGetsDefaultsAndAliases();
    void otherExtensionTypesAreStoredAsGiven();
    void patchErrors_data();
    void patchErrors();
    void encryptedSettingKeysAreUpstreams();

    // tenantInputFromJson
    void minimalTenant();
    void seedWithEveryField();
    void jwksAloneIsEnough();
    void nullsAreUnset();
    void invalidInput_data();
    void invalidInput();
    void inputToPatchReplacesEverything();
};

void TenantInputTest::emptyPatchChangesNothing()
{
    const TenantPatchResult result = parseTenantPatch(QJsonObject());
    QCOMPARE(result.errors, QJsonObject());
    QVERIFY(!result.externalId);
    const TenantPatch &patch = result.patch;
    QVERIFY(!patch.name);
    QVERIFY(!patch.jwtSecret);
    QVERIFY(!patch.jwtJwks);
    QVERIFY(!patch.maxConcurrentUsers);
    QVERIFY(!patch.maxEventsPerSecond);
    QVERIFY(!patch.maxBytesPerSecond);
    QVERIFY(!patch.maxChannelsPerClient);
    QVERIFY(!patch.maxJoinsPerSecond);
    QVERIFY(!patch.maxPresenceEventsPerSecond);
    QVERIFY(!patch.maxPayloadSizeInKb);
    QVERIFY(!patch.maxClientPresenceEventsPerWindow);
    QVERIFY(!patch.clientPresenceWindowMs);
    QVERIFY(!patch.suspend);
    QVERIFY(!patch.privateOnly);
    QVERIFY(!patch.presenceEnabled);
    QVERIFY(!patch.postgresCdcDefault);
    QVERIFY(!patch.migrationsRan);
    QVERIFY(!patch.broadcastAdapter);
    QVERIFY(!patch.featureFlags);
    QVERIFY(!patch.extensions);
}

void TenantInputTest::everyFieldIsRead()
{
    const TenantPatchResult result = parseTenantPatch(
            json("{`external_id`:`acme`,`name`:`Acme Inc.`,`jwt_secret`:`s`,"
                 "`jwt_jwks`:{`keys`:[{`kty`:`oct`,`k`:`c2VjcmV0`}]},"
                 "`max_concurrent_users`:1,`max_events_per_second`:2,`max_bytes_per_second`:3,"
                 "`max_channels_per_client`:4,`max_joins_per_second`:5,"
                 "`max_presence_events_per_second`:6,`max_payload_size_in_kb`:7,"
                 "`max_client_presence_events_per_window`:8,`client_presence_window_ms`:9,"
                 "`history_size`:10,`history_ttl_seconds`:11,"
                 "`suspend`:true,`private_only`:true,`presence_enabled`:true,"
                 "`postgres_cdc_default`:`postgres_cdc_rls`,`migrations_ran`:81,"
                 "`broadcast_adapter`:`phoenix`,`feature_flags`:{`f`:true},"
                 "`unknown_key`:`ignored`,`extensions`:[]}"));
    QCOMPARE(result.errors, QJsonObject());
    QCOMPARE(result.externalId, std::optional<QByteArray>("acme"));
    const TenantPatch &patch = result.patch;
    QCOMPARE(patch.name, std::optional<QString>(QStringLiteral("Acme Inc.")));
    QCOMPARE(patch.jwtSecret, std::optional<QByteArray>("s"));
    QVERIFY(patch.jwtJwks);
    QCOMPARE(QJsonDocument::fromJson(*patch.jwtJwks).object(),
             json("{`keys`:[{`kty`:`oct`,`k`:`c2VjcmV0`}]}"));
    QCOMPARE(patch.maxConcurrentUsers, std::optional<int>(1));
    QCOMPARE(patch.maxEventsPerSecond, std::optional<int>(2));
    QCOMPARE(patch.maxBytesPerSecond, std::optional<int>(3));
    QCOMPARE(patch.maxChannelsPerClient, std::optional<int>(4));
    QCOMPARE(patch.maxJoinsPerSecond, std::optional<int>(5));
    QCOMPARE(patch.maxPresenceEventsPerSecond, std::optional<int>(6));
    QCOMPARE(patch.maxPayloadSizeInKb, std::optional<int>(7));
    QVERIFY(patch.maxClientPresenceEventsPerWindow);
    QCOMPARE(*patch.maxClientPresenceEventsPerWindow, std::optional<int>(8));
    QVERIFY(patch.clientPresenceWindowMs);
    QCOMPARE(*patch.clientPresenceWindowMs, std::optional<int>(9));
    QCOMPARE(patch.historySize, std::optional<int>(10));
    QCOMPARE(patch.historyTtlSeconds, std::optional<int>(11));
    QCOMPARE(patch.suspend, std::optional<bool>(true));
    QCOMPARE(patch.privateOnly, std::optional<bool>(true));
    QCOMPARE(patch.presenceEnabled, std::optional<bool>(true));
    QCOMPARE(patch.postgresCdcDefault, std::optional<QString>(QStringLiteral("postgres_cdc_rls")));
    QCOMPARE(patch.migrationsRan, std::optional<int>(81));
    QCOMPARE(patch.broadcastAdapter, std::optional<QString>(QStringLiteral("phoenix")));
    QCOMPARE(patch.featureFlags, std::optional<QJsonObject>(json("{`f`:true}")));
    // Present and empty: the tenant ends up without extensions.
    QVERIFY(patch.extensions);
    QVERIFY(patch.extensions->isEmpty());
}

void TenantInputTest::castingRules_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("maxConcurrentUsers"); // -1: absent (invalid or null)
    QTest::addColumn<int>("suspend"); // -1: absent, 0/1
    QTest::addColumn<QByteArray>("errors");

    // Integers: JSON integers or strings that parse whole.
    QTest::newRow("integer") << QByteArray("{`max_concurrent_users`:42}") << 42 << -1
                             << QByteArray("{}");
    QTest::newRow("integer string")
            << QByteArray("{`max_concurrent_users`:`42`}") << 42 << -1 << QByteArray("{}");
    QTest::newRow("zero") << QByteArray("{`max_concurrent_users`:0}") << 0 << -1
                          << QByteArray("{}");
    QTest::newRow("fraction") << QByteArray("{`max_concurrent_users`:1.5}") << -1 << -1
                              << QByteArray("{`max_concurrent_users`:[`is invalid`]}");
    QTest::newRow("fraction string") << QByteArray("{`max_concurrent_users`:`1.5`}") << -1 << -1
                                     << QByteArray("{`max_concurrent_users`:[`is invalid`]}");
    QTest::newRow("padded string") << QByteArray("{`max_concurrent_users`:` 42`}") << -1 << -1
                                   << QByteArray("{`max_concurrent_users`:[`is invalid`]}");
    QTest::newRow("word") << QByteArray("{`max_concurrent_users`:`many`}") << -1 << -1
                          << QByteArray("{`max_concurrent_users`:[`is invalid`]}");
    QTest::newRow("boolean as integer") << QByteArray("{`max_concurrent_users`:true}") << -1 << -1
                                        << QByteArray("{`max_concurrent_users`:[`is invalid`]}");
    QTest::newRow("32-digit string")
            << QByteArray("{`max_concurrent_users`:`00000000000000000000000000000042`}") << -1 << -1
            << QByteArray("{`max_concurrent_users`:[`is invalid`]}");
    // Booleans: true/false or exactly "true", "false", "1", "0".
    QTest::newRow("true") << QByteArray("{`suspend`:true}") << -1 << 1 << QByteArray("{}");
    QTest::newRow("false") << QByteArray("{`suspend`:false}") << -1 << 0 << QByteArray("{}");
    QTest::newRow("string true") << QByteArray("{`suspend`:`true`}") << -1 << 1 << QByteArray("{}");
    QTest::newRow("string 0") << QByteArray("{`suspend`:`0`}") << -1 << 0 << QByteArray("{}");
    QTest::newRow("string 1") << QByteArray("{`suspend`:`1`}") << -1 << 1 << QByteArray("{}");
    QTest::newRow("capitalised") << QByteArray("{`suspend`:`TRUE`}") << -1 << -1
                                 << QByteArray("{`suspend`:[`is invalid`]}");
    QTest::newRow("number 1") << QByteArray("{`suspend`:1}") << -1 << -1
                              << QByteArray("{`suspend`:[`is invalid`]}");
    // Empty and blank strings are null: a NOT NULL field stays as it is.
    QTest::newRow("empty string limit")
            << QByteArray("{`max_concurrent_users`:``}") << -1 << -1 << QByteArray("{}");
    QTest::newRow("blank string boolean")
            << QByteArray("{`suspend`:`  `}") << -1 << -1 << QByteArray("{}");
}

void TenantInputTest::castingRules()
{
    QFETCH(QByteArray, body);
    QFETCH(int, maxConcurrentUsers);
    QFETCH(int, suspend);
    QFETCH(QByteArray, errors);

    const TenantPatchResult result = parseTenantPatch(json(body.constData()));
    QCOMPARE(compact(result.errors), compact(json(errors.constData())));
    QCOMPARE(result.patch.maxConcurrentUsers,
             maxConcurrentUsers < 0 ? std::nullopt : std::optional<int>(maxConcurrentUsers));
    QCOMPARE(result.patch.suspend, suspend < 0 ? std::nullopt : std::optional<bool>(suspend == 1));
}

void TenantInputTest::nullsAndBlanks()
{
    const TenantPatchResult result = parseTenantPatch(
            json("{`name`:null,`jwt_secret`:``,`jwt_jwks`:null,"
                 "`max_client_presence_events_per_window`:null,`client_presence_window_ms`:` `,"
                 "`max_events_per_second`:null,`private_only`:null,`extensions`:null,"
                 "`feature_flags`:null,`broadcast_adapter`:null}"));
    QCOMPARE(result.errors, QJsonObject());
    const TenantPatch &patch = result.patch;
    // Nullable fields: present, set to null (the secret and JWKS: cleared).
    QVERIFY(patch.name && patch.name->isNull());
    QVERIFY(patch.jwtSecret && patch.jwtSecret->isEmpty());
    QVERIFY(patch.jwtJwks && patch.jwtJwks->isEmpty());
    QVERIFY(patch.maxClientPresenceEventsPerWindow && !*patch.maxClientPresenceEventsPerWindow);
    QVERIFY(patch.clientPresenceWindowMs && !*patch.clientPresenceWindowMs);
    // NOT NULL fields: null leaves them as they are (upstream would fail with a 500).
    QVERIFY(!patch.maxEventsPerSecond);
    QVERIFY(!patch.privateOnly);
    QVERIFY(!patch.extensions);
    QVERIFY(!patch.featureFlags);
    QVERIFY(!patch.broadcastAdapter);

    // An empty string for the JWKS is null too.
    const TenantPatchResult blank = parseTenantPatch(json("{`jwt_jwks`:``}"));
    QCOMPARE(blank.errors, QJsonObject());
    QVERIFY(blank.patch.jwtJwks && blank.patch.jwtJwks->isEmpty());
}

void TenantInputTest::databaseExtensionGetsDefaultsAndAliases()
{
    const TenantPatchResult result = parseTenantPatch(
            json("{`extensions`:[{`type`:`postgres`,`settings`:{`region`:`eu`,`db_host`:`h`,"
                 "`db_port`:`5432`,`db_name`:`n`,`db_user`:`u`,`db_password`:`p`,"
                 "`poll_interval_ms`:5,`postgres_changes_pool`:7,`subcriber_pool_size`:1,"
                 "`ssl_enforced`:false,`poll_interval`:3},`unknown`:1,`inserted_at`:`x`}]}"));
    QCOMPARE(result.errors, QJsonObject());
    QVERIFY(result.patch.extensions);
    QCOMPARE(result.patch.extensions->size(), 1);
    const Extension &extension = result.patch.extensions->constFirst();
    // "postgres" is the alias of postgres_cdc_rls.
    QCOMPARE(extension.type, QStringLiteral("postgres_cdc_rls"));
    // Defaults merged under the client's values; postgres_changes_pool (which wins) stored
    // under upstream's key; unknown settings kept verbatim.
    QCOMPARE(extension.settings,
             json("{`region`:`eu`,`db_host`:`h`,`db_port`:`5432`,`db_name`:`n`,`db_user`:`u`,"
                  "`db_password`:`p`,`poll_interval_ms`:5,`poll_max_changes`:100,"
                  "`poll_max_record_bytes`:1048576,`publication`:`supabase_realtime`,"
                  "`slot_name`:`supabase_realtime_replication_slot`,`subcriber_pool_size`:7,"
                  "`ssl_enforced`:false,`poll_interval`:3}"));
}

void TenantInputTest::otherExtensionTypesAreStoredAsGiven()
{
    const TenantPatchResult result =
            parseTenantPatch(json("{`extensions`:[{`type`:`custom`,`settings`:{`a`:1}},"
                                  "{`type`:`other`,`settings`:{}}]}"));
    QCOMPARE(result.errors, QJsonObject());
    QVERIFY(result.patch.extensions);
    QCOMPARE(result.patch.extensions->size(), 2);
    QCOMPARE(result.patch.extensions->at(0).type, QStringLiteral("custom"));
    QCOMPARE(result.patch.extensions->at(0).settings, json("{`a`:1}"));
    QCOMPARE(result.patch.extensions->at(1).type, QStringLiteral("other"));
    QCOMPARE(result.patch.extensions->at(1).settings, QJsonObject());
}

void TenantInputTest::patchErrors_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("errors");

    // Upstream's exact 422 shapes (§3.4).
    QTest::newRow("blank external_id")
            << QByteArray("{`external_id`:``}") << QByteArray("{`external_id`:[`can't be blank`]}");
    QTest::newRow("history beyond its bounds")
            << QByteArray("{`history_size`:100001,`history_ttl_seconds`:86401}")
            << QByteArray("{`history_size`:[`is invalid`],`history_ttl_seconds`:[`is invalid`]}");
    QTest::newRow("negative history")
            << QByteArray("{`history_size`:-1}") << QByteArray("{`history_size`:[`is invalid`]}");
    QTest::newRow("history at its bounds and off")
            << QByteArray("{`history_size`:0,`history_ttl_seconds`:86400}") << QByteArray("{}");
    QTest::newRow("two invalid fields")
            << QByteArray("{`max_concurrent_users`:`x`,`private_only`:`x`}")
            << QByteArray("{`max_concurrent_users`:[`is invalid`],`private_only`:[`is invalid`]}");
    QTest::newRow("database settings missing")
            << QByteArray("{`extensions`:[{`type`:`postgres_cdc_rls`,`settings`:{}}]}")
            << QByteArray("{`extensions`:[{`settings`:[`db_password can't be blank`,"
                          "`db_user can't be blank`,`db_name can't be blank`,"
                          "`db_port can't be blank`,`db_host can't be blank`,"
                          "`region can't be blank`]}]}");
    QTest::newRow("region not a string")
            << QByteArray("{`extensions`:[{`type`:`postgres_cdc_rls`,`settings`:{`region`:5,"
                          "`db_host`:`h`,`db_port`:`1`,`db_name`:`n`,`db_user`:`u`,"
                          "`db_password`:`p`}}]}")
            << QByteArray("{`extensions`:[{`settings`:[`region is invalid`]}]}");
    QTest::newRow("null setting")
            << QByteArray("{`extensions`:[{`type`:`postgres_cdc_rls`,`settings`:{`region`:`r`,"
                          "`db_host`:null,`db_port`:`1`,`db_name`:`n`,`db_user`:`u`,"
                          "`db_password`:`p`}}]}")
            << QByteArray("{`extensions`:[{`settings`:[`db_host can't be blank`]}]}");
    QTest::newRow("extension without type")
            << QByteArray("{`extensions`:[{`settings`:{}}]}")
            << QByteArray("{`extensions`:[{`type`:[`can't be blank`]}]}");
    QTest::newRow("extension without type and settings")
            << QByteArray("{`extensions`:[{}]}")
            << QByteArray("{`extensions`:[{`type`:[`can't be blank`],"
                          "`settings`:[`can't be blank`]}]}");
    // Upstream crashes (500) here; a 422 on the field is the safe answer.
    QTest::newRow("extension without settings")
            << QByteArray("{`extensions`:[{`type`:`postgres_cdc_rls`}]}")
            << QByteArray("{`extensions`:[{`settings`:[`can't be blank`]}]}");
    QTest::newRow("settings not an object")
            << QByteArray("{`extensions`:[{`type`:`custom`,`settings`:[1]}]}")
            << QByteArray("{`extensions`:[{`settings`:[`is invalid`]}]}");
    QTest::newRow("extension not an object")
            << QByteArray("{`extensions`:[5]}")
            << QByteArray("{`extensions`:[{`type`:[`can't be blank`],"
                          "`settings`:[`can't be blank`]}]}");
    // Valid entries are {} in the list; the later duplicate of a type is the one refused.
    QTest::newRow("same type twice") << QByteArray("{`extensions`:[{`type`:`custom`,`settings`:{}},"
                                                   "{`type`:`custom`,`settings`:{}}]}")
                                     << QByteArray("{`extensions`:[{},{`tenant_external_id`:"
                                                   "[`has already been taken`]}]}");
    QTest::newRow("alias and type") << QByteArray(
            "{`extensions`:[{`type`:`postgres_cdc_rls`,`settings`:" + QByteArray(DatabaseSettings)
            + "},{`type`:`postgres`,`settings`:" + QByteArray(DatabaseSettings) + "}]}")
                                    << QByteArray("{`extensions`:[{},{`tenant_external_id`:"
                                                  "[`has already been taken`]}]}");
    QTest::newRow("one of two invalid")
            << QByteArray("{`extensions`:[{`type`:`custom`,`settings`:{}},"
                          "{`type`:`postgres_cdc_rls`,`settings`:{`region`:`r`,`db_host`:`h`,"
                          "`db_port`:`1`,`db_name`:`n`,`db_user`:`u`}}]}")
            << QByteArray("{`extensions`:[{},{`settings`:[`db_password can't be blank`]}]}");
    QTest::newRow("extensions not a list")
            << QByteArray("{`extensions`:{}}") << QByteArray("{`extensions`:[`is invalid`]}");
    QTest::newRow("unknown broadcast adapter")
            << QByteArray("{`broadcast_adapter`:`redis`}")
            << QByteArray("{`broadcast_adapter`:[`is invalid`]}");
    QTest::newRow("feature flags not an object") << QByteArray("{`feature_flags`:[1]}")
                                                 << QByteArray("{`feature_flags`:[`is invalid`]}");
    QTest::newRow("name not a string")
            << QByteArray("{`name`:5}") << QByteArray("{`name`:[`is invalid`]}");
    QTest::newRow("jwks not an object")
            << QByteArray("{`jwt_jwks`:`{}`}") << QByteArray("{`jwt_jwks`:[`is invalid`]}");
}

void TenantInputTest::patchErrors()
{
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, errors);

    const TenantPatchResult result = parseTenantPatch(json(body.constData()));
    QCOMPARE(compact(result.errors), compact(json(errors.constData())));
    // Invalid extensions are not half-applied.
    if (result.errors.contains(QLatin1String("extensions"))) {
        QVERIFY(!result.patch.extensions);
    }
}

void TenantInputTest::encryptedSettingKeysAreUpstreams()
{
    QCOMPARE(rt::tenants::encryptedSettingKeys(),
             (QStringList{ QStringLiteral("db_host"), QStringLiteral("db_port"),
                           QStringLiteral("db_name"), QStringLiteral("db_user"),
                           QStringLiteral("db_password") }));
}

void TenantInputTest::minimalTenant()
{
    const TenantInputResult result =
            tenantInputFromJson(json("{`external_id`:`t1`,`jwt_secret`:`s3cret`}"));
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

void TenantInputTest::seedWithEveryField()
{
    const QByteArray body = "{`external_id`:`acme`,`name`:`Acme Inc.`,`jwt_secret`:`s`,"
                            "`jwt_jwks`:{`keys`:[{`kty`:`oct`,`kid`:`k1`,`k`:`c2VjcmV0`}]},"
                            "`max_concurrent_users`:1,`max_events_per_second`:2,"
                            "`max_bytes_per_second`:3,`max_channels_per_client`:4,"
                            "`max_joins_per_second`:5,`max_presence_events_per_second`:6,"
                            "`max_payload_size_in_kb`:7,`max_client_presence_events_per_window`:8,"
                            "`client_presence_window_ms`:9,`suspend`:true,`private_only`:true,"
                            "`presence_enabled`:true,`extensions`:[{`type`:`postgres_cdc_rls`,"
                            "`settings`:"
            + QByteArray(DatabaseSettings) + "}]}";
    const TenantInputResult result = tenantInputFromJson(json(body.constData()));
    QCOMPARE(result.errors, QJsonObject());
    QVERIFY(result.input.has_value());
    const TenantInput &input = *result.input;
    QCOMPARE(input.externalId, QByteArray("acme"));
    QCOMPARE(input.name, QStringLiteral("Acme Inc."));
    QCOMPARE(QJsonDocument::fromJson(input.jwtJwks).object(),
             json("{`keys`:[{`kty`:`oct`,`kid`:`k1`,`k`:`c2VjcmV0`}]}"));
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
    const Extension &extension = input.extensions.constFirst();
    QCOMPARE(extension.type, QStringLiteral("postgres_cdc_rls"));
    QCOMPARE(extension.settings.value(QLatin1String("db_host")).toString(), QStringLiteral("h"));
    QCOMPARE(extension.settings.value(QLatin1String("publication")).toString(),
             QStringLiteral("supabase_realtime"));
}

void TenantInputTest::jwksAloneIsEnough()
{
    // jwt_secret or jwt_jwks is required, not both.
    const TenantInputResult result =
            tenantInputFromJson(json("{`external_id`:`t`,`jwt_jwks`:{`keys`:[]}}"));
    QCOMPARE(result.errors, QJsonObject());
    QVERIFY(result.input.has_value());
    QVERIFY(result.input->jwtSecret.isEmpty());
    QCOMPARE(QJsonDocument::fromJson(result.input->jwtJwks).object(), json("{`keys`:[]}"));
}

void TenantInputTest::nullsAreUnset()
{
    const TenantInputResult result = tenantInputFromJson(
            json("{`external_id`:`t`,`jwt_secret`:`s`,`jwt_jwks`:null,"
                 "`max_concurrent_users`:null,`suspend`:null,`extensions`:null,`name`:null}"));
    QCOMPARE(result.errors, QJsonObject());
    QVERIFY(result.input.has_value());
    QVERIFY(!result.input->maxConcurrentUsers);
    QCOMPARE(result.input->suspend, false);
    QVERIFY(result.input->extensions.isEmpty());
    QCOMPARE(result.input->name, QStringLiteral("t"));
}

void TenantInputTest::invalidInput_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("errors");

    const QByteArray required = "[`either jwt_secret or jwt_jwks must be provided`]";
    QTest::newRow("empty object") << QByteArray(
            "{}") << "{`external_id`:[`can't be blank`],`jwt_secret`:" + required + "}";
    QTest::newRow("empty external_id") << QByteArray("{`external_id`:``,`jwt_secret`:`s`}")
                                       << QByteArray("{`external_id`:[`can't be blank`]}");
    QTest::newRow("blank external_id") << QByteArray("{`external_id`:`  `,`jwt_secret`:`s`}")
                                       << QByteArray("{`external_id`:[`can't be blank`]}");
    QTest::newRow("null external_id") << QByteArray("{`external_id`:null,`jwt_secret`:`s`}")
                                      << QByteArray("{`external_id`:[`can't be blank`]}");
    // The external id is the first DNS label of the Host header: it cannot have a dot.
    QTest::newRow("dotted external_id") << QByteArray("{`external_id`:`a.b`,`jwt_secret`:`s`}")
                                        << QByteArray("{`external_id`:[`is invalid`]}");
    QTest::newRow("external_id not a string") << QByteArray("{`external_id`:5,`jwt_secret`:`s`}")
                                              << QByteArray("{`external_id`:[`is invalid`]}");
    QTest::newRow("no secret and no jwks")
            << QByteArray("{`external_id`:`t`}") << "{`jwt_secret`:" + required + "}";
    QTest::newRow("empty secret") << QByteArray("{`external_id`:`t`,`jwt_secret`:``}")
                                  << "{`jwt_secret`:" + required + "}";
    QTest::newRow("secret not a string") << QByteArray("{`external_id`:`t`,`jwt_secret`:5}")
                                         << QByteArray("{`jwt_secret`:[`is invalid`]}");
    QTest::newRow("jwks without keys array")
            << QByteArray("{`external_id`:`t`,`jwt_jwks`:{`keys`:`x`}}")
            << QByteArray("{`jwt_jwks`:[`is invalid`]}");
    QTest::newRow("jwks not an object")
            << QByteArray("{`external_id`:`t`,`jwt_secret`:`s`,`jwt_jwks`:`{}`}")
            << QByteArray("{`jwt_jwks`:[`is invalid`]}");
    // Negative limits are refused (upstream accepts them; nothing can use one).
    QTest::newRow("negative limit")
            << QByteArray("{`external_id`:`t`,`jwt_secret`:`s`,`max_concurrent_users`:-1}")
            << QByteArray("{`max_concurrent_users`:[`is invalid`]}");
    QTest::newRow("fractional limit")
            << QByteArray("{`external_id`:`t`,`jwt_secret`:`s`,`max_joins_per_second`:1.5}")
            << QByteArray("{`max_joins_per_second`:[`is invalid`]}");
    QTest::newRow("huge limit") << QByteArray(
            "{`external_id`:`t`,`jwt_secret`:`s`,`max_payload_size_in_kb`:1e12}")
                                << QByteArray("{`max_payload_size_in_kb`:[`is invalid`]}");
    QTest::newRow("limit is an object")
            << QByteArray("{`external_id`:`t`,`jwt_secret`:`s`,`client_presence_window_ms`:{}}")
            << QByteArray("{`client_presence_window_ms`:[`is invalid`]}");
    QTest::newRow("boolean is a word")
            << QByteArray("{`external_id`:`t`,`jwt_secret`:`s`,`suspend`:`yes`}")
            << QByteArray("{`suspend`:[`is invalid`]}");
    QTest::newRow("boolean is a number")
            << QByteArray("{`external_id`:`t`,`jwt_secret`:`s`,`private_only`:2}")
            << QByteArray("{`private_only`:[`is invalid`]}");
    QTest::newRow("extensions not a list")
            << QByteArray("{`external_id`:`t`,`jwt_secret`:`s`,`extensions`:{}}")
            << QByteArray("{`extensions`:[`is invalid`]}");
    QTest::newRow("extension without settings")
            << QByteArray("{`external_id`:`t`,`jwt_secret`:`s`,"
                          "`extensions`:[{`type`:`postgres_cdc_rls`}]}")
            << QByteArray("{`extensions`:[{`settings`:[`can't be blank`]}]}");
    QTest::newRow("extension without type")
            << QByteArray("{`external_id`:`t`,`jwt_secret`:`s`,`extensions`:[{`settings`:{}}]}")
            << QByteArray("{`extensions`:[{`type`:[`can't be blank`]}]}");
    // Every error is reported at once, one key per field.
    QTest::newRow("several fields")
            << QByteArray("{`external_id`:``,`jwt_secret`:5,`suspend`:`x`,"
                          "`max_events_per_second`:-5}")
            << QByteArray("{`external_id`:[`can't be blank`],`jwt_secret`:[`is invalid`],"
                          "`max_events_per_second`:[`is invalid`],`suspend`:[`is invalid`]}");
}

void TenantInputTest::invalidInput()
{
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, errors);

    const TenantInputResult result = tenantInputFromJson(json(body.constData()));
    QVERIFY(!result.input.has_value());
    QCOMPARE(compact(result.errors), compact(json(errors.constData())));
    // The shape is {"field":["message", ...]} (extensions: one object per element).
    for (auto it = result.errors.constBegin(); it != result.errors.constEnd(); ++it) {
        QVERIFY(it.value().isArray());
        QVERIFY(!it.value().toArray().isEmpty());
        QVERIFY(it.value().toArray().at(0).isString() || it.value().toArray().at(0).isObject());
    }
}

void TenantInputTest::inputToPatchReplacesEverything()
{
    TenantInput input;
    input.externalId = "t";
    input.jwtSecret = "s";
    input.maxJoinsPerSecond = 3;
    const TenantPatch patch = input.toPatch();
    // A seed names every field, so that replacing a stored tenant leaves nothing behind.
    QCOMPARE(patch.name, std::optional<QString>(QStringLiteral("t")));
    QCOMPARE(patch.jwtSecret, std::optional<QByteArray>("s"));
    QVERIFY(patch.jwtJwks && patch.jwtJwks->isEmpty());
    QCOMPARE(patch.maxJoinsPerSecond, std::optional<int>(3));
    QCOMPARE(patch.suspend, std::optional<bool>(false));
    QCOMPARE(patch.privateOnly, std::optional<bool>(false));
    QCOMPARE(patch.presenceEnabled, std::optional<bool>(false));
    QVERIFY(patch.extensions && patch.extensions->isEmpty());
    QVERIFY(patch.maxClientPresenceEventsPerWindow && !*patch.maxClientPresenceEventsPerWindow);
}

void TenantInputTest::floatLiteralsAreFoundInTheRawBody()
{
    const QByteArray body =
            "{\"tenant\":{\"max_concurrent_users\":1.0,\"name\":\"a:1.5,\\\"x\\\"\","
            "\"max_events_per_second\":1e2,\"max_joins_per_second\":-3,"
            "\"extensions\":[{\"settings\":{\"poll_interval_ms\":2.5}}],"
            "\"feature_flags\":{\"deep\":0.5},\"client_presence_window_ms\":7E3}, "
            "\"other\":{\"max_channels_per_client\":1.5}}";
    using rt::tenants::floatLiteralTenantFields;
    using rt::tenants::refuseFloatIntegers;
    const QStringList fields = floatLiteralTenantFields(body);
    // Only direct members of "tenant"; strings, nested objects and integers do not count.
    QCOMPARE(fields,
             (QStringList{ QStringLiteral("max_concurrent_users"),
                           QStringLiteral("max_events_per_second"),
                           QStringLiteral("client_presence_window_ms") }));
    QJsonObject errors;
    refuseFloatIntegers(fields + QStringList{ QStringLiteral("name") }, errors);
    QCOMPARE(errors.keys(),
             (QStringList{ QStringLiteral("client_presence_window_ms"),
                           QStringLiteral("max_concurrent_users"),
                           QStringLiteral("max_events_per_second") }));
    QCOMPARE(errors.value(QLatin1String("max_concurrent_users")),
             QJsonValue(QJsonArray{ QStringLiteral("is invalid") }));
    // Malformed or truncated text ends the scan without a crash.
    QVERIFY(floatLiteralTenantFields("{\"tenant\":{\"max_concurrent_users\":1.").size() == 1);
    QVERIFY(floatLiteralTenantFields("}}]\"").isEmpty());
    QVERIFY(floatLiteralTenantFields("").isEmpty());
}

void TenantInputTest::writeBodies_data()
{
    using Status = rt::tenants::TenantWriteBody::Status;
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<Status>("status");
    QTest::addColumn<QStringList>("errors");
    QTest::newRow("not JSON") << QByteArray("{`tenant`:") << Status::NotJson << QStringList();
    QTest::newRow("empty") << QByteArray() << Status::NotJson << QStringList();
    QTest::newRow("array") << QByteArray("[{`tenant`:{}}]") << Status::NoTenantObject
                           << QStringList();
    QTest::newRow("no tenant") << QByteArray("{`name`:`a`}") << Status::NoTenantObject
                               << QStringList();
    QTest::newRow("tenant not an object")
            << QByteArray("{`tenant`:[`a`]}") << Status::NoTenantObject << QStringList();
    QTest::newRow("valid") << QByteArray("{`tenant`:{`name`:`a`,`max_concurrent_users`:5}}")
                           << Status::Read << QStringList();
    QTest::newRow("float integer")
            << QByteArray("{`tenant`:{`max_concurrent_users`:5.0,`max_joins_per_second`:`x`}}")
            << Status::Read
            << QStringList{ QStringLiteral("max_concurrent_users"),
                            QStringLiteral("max_joins_per_second") };
}

// The route's reading of the whole body: the two 400s, then the patch and its field errors.
void TenantInputTest::writeBodies()
{
    QFETCH(QByteArray, body);
    QFETCH(rt::tenants::TenantWriteBody::Status, status);
    QFETCH(QStringList, errors);
    body.replace('`', '"');
    const rt::tenants::TenantWriteBody read = rt::tenants::readTenantWriteBody(body);
    QCOMPARE(read.status, status);
    QCOMPARE(read.parsed.errors.keys(), errors);
    if (status == rt::tenants::TenantWriteBody::Status::Read && errors.isEmpty()) {
        QCOMPARE(read.parsed.patch.name, std::optional<QString>(QStringLiteral("a")));
        QCOMPARE(read.parsed.patch.maxConcurrentUsers, std::optional<int>(5));
    }
}

QTEST_GUILESS_MAIN(TenantInputTest)
#include "tst_tenant_input.moc"
