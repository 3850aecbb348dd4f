// The tenant API's tenant rows (shared/api): a recorded list reads into the right values, what is
// written reads back equal, absent fields keep their defaults, and a field of the wrong type is an
// error naming its path.
#include "shared/api/tenant_summary.h"
#include "tests/unit/api/recorded.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using rt::api::TenantSummary;

class TenantSummaryTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsARecordedList()
    {
        const auto tenants = TenantSummary::listFromJson(recorded("tenants-list.json"));
        QVERIFY2(tenants.ok(), qPrintable(tenants ? QString() : tenants.error().message));
        QCOMPARE(tenants->size(), 2);
        const TenantSummary &acme = tenants->at(0);
        QCOMPARE(acme.id, QStringLiteral("2b8b8f5e-7f3c-4a8e-9d55-0c9e0b6f4a11"));
        QCOMPARE(acme.externalId, QStringLiteral("acme"));
        QCOMPARE(acme.name, std::optional<QString>(QStringLiteral("Acme Corp")));
        QCOMPARE(acme.maxConcurrentUsers, 5000);
        QCOMPARE(acme.maxChannelsPerClient, 100);
        QCOMPARE(acme.insertedAt, QDateTime(QDate(2026, 11, 2), QTime(9, 15, 4), Qt::UTC));
        QVERIFY(acme.privateOnly);
        QVERIFY(!acme.presenceEnabled);
        QVERIFY(!acme.maxClientPresenceEventsPerWindow.has_value());
        QCOMPARE(acme.extensions.size(), 1);
        QCOMPARE(acme.extensions[0].type, QStringLiteral("postgres_cdc_rls"));
        QCOMPARE(acme.extensions[0].updatedAt,
                 QDateTime(QDate(2026, 11, 20), QTime(17, 1, 59), Qt::UTC));
        QCOMPARE(acme.extensions[0].settings.value(QLatin1String("poll_interval_ms")).toInt(), 100);

        const TenantSummary &globex = tenants->at(1);
        QVERIFY(!globex.name.has_value()); // null name
        QVERIFY(globex.presenceEnabled);
        QCOMPARE(globex.maxClientPresenceEventsPerWindow, std::optional<qint64>(5));
        QCOMPARE(globex.clientPresenceWindowMs, std::optional<qint64>(30000));
        QVERIFY(globex.extensions.isEmpty());
    }

    void writesWhatItReads()
    {
        const auto tenants = TenantSummary::listFromJson(recorded("tenants-list.json"));
        QVERIFY(tenants.ok());
        // The written JSON equals the server's, field for field (key order aside).
        const QJsonArray recordedArray = QJsonDocument::fromJson(recorded("tenants-list.json"))
                                                 .object()
                                                 .value(QLatin1String("data"))
                                                 .toArray();
        for (qsizetype i = 0; i < tenants->size(); ++i) {
            QCOMPARE(tenants->at(i).toJson(), recordedArray.at(i).toObject());
            const auto again = TenantSummary::fromJson(tenants->at(i).toJson());
            QVERIFY(again.ok());
            QCOMPARE(*again, tenants->at(i));
        }
    }

    void readsOneTenantAnswer()
    {
        const auto tenant = TenantSummary::dataFromJson(QByteArray(
                R"({"data":{"external_id":"initech","max_events_per_second":7,"future":true}})"));
        QVERIFY2(tenant.ok(), qPrintable(tenant ? QString() : tenant.error().message));
        QCOMPARE(tenant->externalId, QStringLiteral("initech"));
        QCOMPARE(tenant->maxEventsPerSecond, 7);
        // Absent fields keep their defaults.
        QVERIFY(tenant->id.isEmpty());
        QVERIFY(!tenant->name.has_value());
        QCOMPARE(tenant->maxConcurrentUsers, 0);
        QVERIFY(!tenant->insertedAt.isValid());
        QVERIFY(tenant->extensions.isEmpty());
    }

    void wrongTypesAreErrorsNamingTheField_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("error");
        QTest::newRow("not json") << QByteArray("{") << QStringLiteral("the answer is not JSON");
        QTest::newRow("data not a list")
                << QByteArray(R"({"data":{}})") << QStringLiteral("data must be an array");
        QTest::newRow("row not an object") << QByteArray(R"({"data":[{"external_id":"a"},3]})")
                                           << QStringLiteral("data[1] must be an object");
        QTest::newRow("limit a string")
                << QByteArray(R"({"data":[{"external_id":"a","max_concurrent_users":"5"}]})")
                << QStringLiteral("data[0].max_concurrent_users must be an integer");
        QTest::newRow("limit a fraction")
                << QByteArray(R"({"data":[{"external_id":"a","max_joins_per_second":1.5}]})")
                << QStringLiteral("data[0].max_joins_per_second must be an integer");
        QTest::newRow("window a bool")
                << QByteArray(R"({"data":[{"external_id":"a","client_presence_window_ms":true}]})")
                << QStringLiteral("data[0].client_presence_window_ms must be an integer or null");
        QTest::newRow("name a number") << QByteArray(R"({"data":[{"external_id":"a","name":1}]})")
                                       << QStringLiteral("data[0].name must be a string or null");
        QTest::newRow("bad timestamp")
                << QByteArray(
                           R"({"data":[{"external_id":"a","inserted_at":"2026-13-01T00:00:00"}]})")
                << QStringLiteral("data[0].inserted_at must be a date and time");
        QTest::newRow("zoned timestamp")
                << QByteArray(
                           R"({"data":[{"external_id":"a","inserted_at":"2026-11-01T00:00:00Z"}]})")
                << QStringLiteral("data[0].inserted_at must be a date and time");
        QTest::newRow("extension settings")
                << QByteArray(R"({"data":[{"external_id":"a","extensions":[{"settings":[]}]}]})")
                << QStringLiteral("data[0].extensions[0].settings must be an object");
        QTest::newRow("no external id")
                << QByteArray(R"({"data":[{"external_id":"a"},{"id":"x"}]})")
                << QStringLiteral("data[1].external_id must be a non-empty string");
    }
    void wrongTypesAreErrorsNamingTheField()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, error);
        const auto tenants = TenantSummary::listFromJson(json);
        QVERIFY(!tenants.ok());
        QVERIFY2(tenants.error().message.startsWith(error), qPrintable(tenants.error().message));
    }
};

QTEST_GUILESS_MAIN(TenantSummaryTest)
#include "tst_tenant_summary.moc"
