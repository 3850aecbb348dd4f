// What the admin, configuration and tenant APIs' answers mean: (status, body) -> DTO or an
// error in words. The bodies are the servers' shapes (server/http/*_routes.cpp).
#include "dashboard/api/admin_responses.h"
#include "dashboard/api/tenant_changes.h"

#include <QFile>
#include <QJsonObject>
#include <QTest>

using rt::dashboard::AdminResponses;
using rt::dashboard::ApiError;
using rt::dashboard::ConfigConflict;
using rt::dashboard::ConfigWriteOutcome;
using rt::dashboard::ConfigWritten;

Q_DECLARE_METATYPE(ApiError::Kind)

namespace {

QByteArray recordedSnapshot()
{
    QFile file(QStringLiteral(RT_API_TEST_DATA "/snapshot-3-nodes.json"));
    if (!file.open(QIODevice::ReadOnly)) {
        qFatal("cannot read the recorded snapshot");
    }
    return file.readAll();
}

} // namespace

class AdminResponsesTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void snapshotOk()
    {
        const auto snapshot = AdminResponses::snapshot(200, recordedSnapshot());
        QVERIFY2(snapshot, qPrintable(snapshot ? QString() : snapshot.error().text));
        QCOMPARE(snapshot->answeredBy, QStringLiteral("node-a"));
        QCOMPARE(snapshot->nodes.size(), 3);
    }

    void errors_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<ApiError::Kind>("kind");
        QTest::addColumn<QString>("serverMessage");
        QTest::addColumn<QString>("text");
        QTest::newRow("403 empty")
                << 403 << QByteArray() << ApiError::Kind::Refused << QString()
                << QStringLiteral("The server refused the operator token (HTTP 403 Forbidden). "
                                  "The token must be a JWT signed with the cluster's "
                                  "API_JWT_SECRET.");
        QTest::newRow("500 phrase as a JSON string")
                << 500 << QByteArray(R"("Internal Server Error")") << ApiError::Kind::Http
                << QStringLiteral("Internal Server Error")
                << QStringLiteral("The server answered HTTP 500 Internal Server Error: Internal "
                                  "Server Error");
        QTest::newRow("503 config error")
                << 503 << QByteArray(R"({"error":"the cluster backend is unavailable"})")
                << ApiError::Kind::Http << QStringLiteral("the cluster backend is unavailable")
                << QStringLiteral("The server answered HTTP 503 Service Unavailable: the cluster "
                                  "backend is unavailable");
        QTest::newRow("503 without words")
                << 503 << QByteArray() << ApiError::Kind::Http << QString()
                << QStringLiteral("The server is unavailable (HTTP 503 Service Unavailable).");
        QTest::newRow("404 tenant message")
                << 404 << QByteArray(R"({"message":"not found"})") << ApiError::Kind::Http
                << QStringLiteral("not found")
                << QStringLiteral("The server answered HTTP 404 Not Found: not found");
        QTest::newRow("400 plain text")
                << 400 << QByteArray("Bad Request") << ApiError::Kind::Http
                << QStringLiteral("Bad Request")
                << QStringLiteral("The server answered HTTP 400 Bad Request: Bad Request");
        QTest::newRow("422 per-field errors")
                << 422
                << QByteArray(R"({"errors":{"external_id":["can't be blank"],)"
                              R"("extensions":[{},{"settings":["db_host can't be blank"]}]}})")
                << ApiError::Kind::Http
                // QJsonObject orders the fields by name.
                << QStringLiteral("extensions[1].settings: db_host can't be blank; external_id: "
                                  "can't be blank")
                << QStringLiteral("The server answered HTTP 422 Unprocessable Entity: "
                                  "extensions[1].settings: db_host can't be blank; external_id: "
                                  "can't be blank");
        QTest::newRow("unknown status") << 418 << QByteArray() << ApiError::Kind::Http << QString()
                                        << QStringLiteral("The server answered HTTP 418.");
    }
    void errors()
    {
        QFETCH(int, status);
        QFETCH(QByteArray, body);
        QFETCH(ApiError::Kind, kind);
        QFETCH(QString, serverMessage);
        QFETCH(QString, text);
        const auto snapshot = AdminResponses::snapshot(status, body);
        QVERIFY(!snapshot);
        QCOMPARE(snapshot.error().kind, kind);
        QCOMPARE(snapshot.error().httpStatus, status);
        QCOMPARE(snapshot.error().serverMessage, serverMessage);
        QCOMPARE(snapshot.error().text, text);
    }

    void malformedJson_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("detail");
        QTest::newRow("truncated") << QByteArray(R"({"nodes": [)")
                                   << QStringLiteral("at byte"); // Qt's parse error text + offset
        QTest::newRow("array") << QByteArray("[]") << QStringLiteral("not a JSON object");
        QTest::newRow("wrong type names the field")
                << QByteArray(R"({"nodes":[{"id":"a","load":"high"}]})")
                << QStringLiteral("nodes[0].load must be a number or null");
    }
    void malformedJson()
    {
        QFETCH(QByteArray, body);
        QFETCH(QString, detail);
        const auto snapshot = AdminResponses::snapshot(200, body);
        QVERIFY(!snapshot);
        QCOMPARE(snapshot.error().kind, ApiError::Kind::Json);
        QCOMPARE(snapshot.error().httpStatus, 200);
        QVERIFY2(snapshot.error().text.startsWith(
                         QStringLiteral("The server's answer could not be read: ")),
                 qPrintable(snapshot.error().text));
        QVERIFY2(snapshot.error().text.contains(detail), qPrintable(snapshot.error().text));
    }

    void configListing()
    {
        const QByteArray body =
                R"({"revision":17,"available":true,"entries":[)"
                R"({"key":"region_mapping","value":{"eu":"eu-west-1"},"mod_revision":12,"temporary":false},)"
                R"({"key":"tenant_flags.acme","value":{"suspend":true},"mod_revision":17,"temporary":true}],)"
                R"("problems":[{"key":"tenant_flags.acme","message":"unknown field"}]})";
        const auto listing = AdminResponses::configListing(200, body);
        QVERIFY2(listing, qPrintable(listing ? QString() : listing.error().text));
        QCOMPARE(listing->revision, 17);
        QVERIFY(listing->available);
        QCOMPARE(listing->entries.size(), 2);
        QCOMPARE(listing->entries.at(0).key, QStringLiteral("region_mapping"));
        QCOMPARE(listing->entries.at(0).value, QByteArray(R"({"eu":"eu-west-1"})"));
        QCOMPARE(listing->entries.at(0).modRevision, 12);
        QVERIFY(!listing->entries.at(0).temporary);
        QVERIFY(listing->entries.at(1).temporary);
        QCOMPARE(listing->problems.size(), 1);
        QCOMPARE(listing->problems.at(0).message, QStringLiteral("unknown field"));

        const auto bad = AdminResponses::configListing(
                200, R"({"revision":1,"entries":[{"key":"k","value":1,"mod_revision":"x"}]})");
        QVERIFY(!bad);
        QVERIFY2(bad.error().text.contains(
                         QStringLiteral("entries[0].mod_revision must be an integer")),
                 qPrintable(bad.error().text));
    }

    void configWritten()
    {
        const ConfigWriteOutcome outcome = AdminResponses::configWrite(
                QStringLiteral("region_mapping"), 200, R"({"revision":42})");
        const auto *written = std::get_if<ConfigWritten>(&outcome);
        QVERIFY(written);
        QCOMPARE(written->revision, 42);

        const ConfigWriteOutcome noRevision =
                AdminResponses::configWrite(QStringLiteral("region_mapping"), 200, "{}");
        QVERIFY(std::holds_alternative<ApiError>(noRevision));
        QCOMPARE(std::get<ApiError>(noRevision).kind, ApiError::Kind::Json);
    }

    void configConflictCarriesTheCurrentValueAndRevision()
    {
        const QByteArray body =
                R"({"error":"conflict: region_mapping was changed (mod_revision 43, expected_revision 42); nothing was written",)"
                R"("current":{"value":{"eu":"eu-central-1"},"mod_revision":43,"temporary":false}})";
        const ConfigWriteOutcome outcome =
                AdminResponses::configWrite(QStringLiteral("region_mapping"), 409, body);
        const auto *conflict = std::get_if<ConfigConflict>(&outcome);
        QVERIFY(conflict);
        QCOMPARE(conflict->key, QStringLiteral("region_mapping"));
        QVERIFY(conflict->exists);
        QCOMPARE(conflict->current.key, QStringLiteral("region_mapping"));
        QCOMPARE(conflict->current.value, QByteArray(R"({"eu":"eu-central-1"})"));
        QCOMPARE(conflict->current.modRevision, 43);
        QVERIFY(!conflict->current.temporary);
        QVERIFY(conflict->serverMessage.startsWith(QStringLiteral("conflict: region_mapping")));
    }

    void configConflictOnAKeyThatIsGone()
    {
        const ConfigWriteOutcome outcome = AdminResponses::configWrite(
                QStringLiteral("tenant_flags.acme"), 409,
                R"j({"error":"conflict: tenant_flags.acme does not exist (expected_revision 7)","current":null})j");
        const auto *conflict = std::get_if<ConfigConflict>(&outcome);
        QVERIFY(conflict);
        QVERIFY(!conflict->exists);
        QCOMPARE(conflict->current.modRevision, 0); // reapply: "must not exist"
    }

    void configConflictScalarValue()
    {
        const ConfigWriteOutcome outcome = AdminResponses::configWrite(
                QStringLiteral("k"), 409,
                R"({"error":"conflict","current":{"value":"text","mod_revision":5,"temporary":true}})");
        const auto *conflict = std::get_if<ConfigConflict>(&outcome);
        QVERIFY(conflict);
        QCOMPARE(conflict->current.value, QByteArray(R"("text")"));
        QVERIFY(conflict->current.temporary);
    }

    void configWriteErrors()
    {
        const ConfigWriteOutcome invalid = AdminResponses::configWrite(
                QStringLiteral("k"), 422, R"({"error":"unknown key","key":"k"})");
        QVERIFY(std::holds_alternative<ApiError>(invalid));
        QCOMPARE(std::get<ApiError>(invalid).serverMessage, QStringLiteral("unknown key"));

        const ConfigWriteOutcome garbled = AdminResponses::configWrite(
                QStringLiteral("k"), 409, R"({"error":"conflict","current":5})");
        QVERIFY(std::holds_alternative<ApiError>(garbled));
        QCOMPARE(std::get<ApiError>(garbled).kind, ApiError::Kind::Json);
        QVERIFY(std::get<ApiError>(garbled).text.contains(
                QStringLiteral("current must be an object or null")));
    }

    void tenants()
    {
        const QByteArray list =
                R"({"data":[{"id":"6f1c","external_id":"acme","name":"Acme","max_concurrent_users":200,)"
                R"("max_channels_per_client":100,"max_events_per_second":100,"max_joins_per_second":100,)"
                R"("inserted_at":"2026-11-30T20:50:35","private_only":false,"presence_enabled":true,)"
                R"("max_client_presence_events_per_window":null,"client_presence_window_ms":null,"extensions":[]}]})";
        const auto tenants = AdminResponses::tenantList(200, list);
        QVERIFY2(tenants, qPrintable(tenants ? QString() : tenants.error().text));
        QCOMPARE(tenants->size(), 1);
        QCOMPARE(tenants->at(0).externalId, QStringLiteral("acme"));
        QCOMPARE(tenants->at(0).maxConcurrentUsers, 200);

        const auto created = AdminResponses::tenant(201, R"({"data":{"external_id":"globex"}})");
        QVERIFY(created);
        QCOMPARE(created->externalId, QStringLiteral("globex"));

        const auto typeError = AdminResponses::tenantList(
                200, R"({"data":[{"external_id":"a","max_concurrent_users":"x"}]})");
        QVERIFY(!typeError);
        QCOMPARE(typeError.error().kind, ApiError::Kind::Json);
        QVERIFY2(typeError.error().text.contains(QStringLiteral("max_concurrent_users")),
                 qPrintable(typeError.error().text));

        QVERIFY(!AdminResponses::noContent(204, QByteArray()));
        const std::optional<ApiError> missing =
                AdminResponses::noContent(404, R"({"message":"not found"})");
        QVERIFY(missing);
        QCOMPARE(missing->serverMessage, QStringLiteral("not found"));
    }

    void tenantRequestBody()
    {
        rt::dashboard::TenantChanges changes;
        changes.maxConcurrentUsers = 500;
        changes.suspend = true;
        changes.other.insert(QStringLiteral("max_payload_size_in_kb"), 100);
        const QJsonObject body = changes.toRequestJson();
        QCOMPARE(body.keys(), QStringList{ QStringLiteral("tenant") });
        const QJsonObject tenant = body.value(QLatin1String("tenant")).toObject();
        QCOMPARE(tenant,
                 (QJsonObject{ { QStringLiteral("max_concurrent_users"), 500 },
                               { QStringLiteral("suspend"), true },
                               { QStringLiteral("max_payload_size_in_kb"), 100 } }));
    }

    void networkErrors()
    {
        const ApiError refused = AdminResponses::networkError(ApiError::Kind::Network,
                                                              QStringLiteral("Connection refused"));
        QCOMPARE(refused.httpStatus, 0);
        QCOMPARE(refused.text,
                 QStringLiteral("The server could not be reached: Connection refused"));
        QCOMPARE(AdminResponses::networkError(ApiError::Kind::Timeout, QString()).text,
                 QStringLiteral("The server did not answer in time."));
    }
};

QTEST_GUILESS_MAIN(AdminResponsesTest)
#include "tst_admin_responses.moc"
