#include "server/channels/join_payload.h"
#include "tests/support/process/run_in_child.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTest>

#include <sys/wait.h>

using rt::channels::JoinConfig;
using rt::channels::parseJoinConfig;
using rt::channels::postgresChangeId;
using rt::channels::postgresChangesWithIds;

#if defined(__SANITIZE_ADDRESS__)
#  define RT_TEST_UNDER_SANITIZERS 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define RT_TEST_UNDER_SANITIZERS 1
#  endif
#endif

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

QJsonArray array(QByteArrayView json)
{
    return QJsonDocument::fromJson(json.toByteArray()).array();
}

// A join payload whose config has `value` at the given place, e.g. ("broadcast", "self", "true").
QJsonObject payloadWith(const char *section, const char *field, QByteArrayView valueJson)
{
    const QByteArray inner = "{\"" + QByteArray(field) + "\":" + valueJson.toByteArray() + '}';
    const QByteArray config =
            section == nullptr ? inner : "{\"" + QByteArray(section) + "\":" + inner + '}';
    return object(QByteArray("{\"config\":" + config + '}'));
}

// The payload realtime-js 2.x sends (spec/client-protocol.md §7.1).
const QByteArray RealtimeJsPayload =
        R"({"config":{"broadcast":{"self":true,"ack":true},)"
        R"("presence":{"key":"user-1","enabled":true},)"
        R"("postgres_changes":[{"event":"INSERT","schema":"public",)"
        R"("table":"messages"},{"event":"*","schema":"public",)"
        R"("table":"todos","filter":"id=eq.1"}],"private":false},)"
        R"("access_token":"jwt-token-A","version":"realtime-js/2.119.1"})";

} // namespace

// Tests the lenient phx_join payload reading of spec/server-protocol.md §3.2 and the join reply's
// postgres_changes ids of §3.4.
class JoinPayloadTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void realtimeJsPayload();
    void defaultsForAnEmptyConfig();
    void booleans_data();
    void booleans();
    void wrongTypesFallBackToDefaults_data();
    void wrongTypesFallBackToDefaults();
    void accessToken_data();
    void accessToken();
    void presenceKey_data();
    void presenceKey();
    void largeNumericPresenceKey();
    void postgresChanges_data();
    void postgresChanges();
    void replayIsKeptAsSent();
    void postgresChangesOptions_data();
    void postgresChangesOptions();
    void recover_data();
    void recover();
    void legacyPayloadWithoutConfig();

    void idsEchoEachEntryVerbatim();
    void idsAreIntegersBelow2To27();
    void identicalEntriesGetIdenticalIds();
    void distinctEntriesGetDistinctIds();
    void orderIsKept();
    void filterStringsAreUnchanged_data();
    void filterStringsAreUnchanged();
    void noEntriesGiveAnEmptyList();
};

void JoinPayloadTest::realtimeJsPayload()
{
    const JoinConfig config = parseJoinConfig(object(RealtimeJsPayload));
    QVERIFY(config.hasConfig);
    QCOMPARE(config.broadcastSelf, true);
    QCOMPARE(config.broadcastAck, true);
    QCOMPARE(config.replicationReady, false);
    QVERIFY(!config.replay.has_value());
    QCOMPARE(config.presenceEnabled, true);
    QCOMPARE(config.presenceKey, QByteArray("user-1"));
    QCOMPARE(config.postgresChanges.size(), 2);
    QCOMPARE(config.postgresChanges.at(1).toObject().value(QLatin1String("filter")).toString(),
             QStringLiteral("id=eq.1"));
    QCOMPARE(config.isPrivate, false);
    QCOMPARE(config.accessToken, std::optional<QByteArray>("jwt-token-A"));
}

void JoinPayloadTest::defaultsForAnEmptyConfig()
{
    const JoinConfig config = parseJoinConfig(object(R"({"config":{}})"));
    QVERIFY(config.hasConfig);
    QCOMPARE(config.broadcastSelf, false);
    QCOMPARE(config.broadcastAck, false);
    QCOMPARE(config.replicationReady, false);
    QVERIFY(!config.replay.has_value());
    QCOMPARE(config.presenceEnabled, false);
    QCOMPARE(config.presenceKey, QByteArray());
    QCOMPARE(config.postgresChanges, QJsonArray());
    QCOMPARE(config.isPrivate, false);
    QVERIFY(!config.accessToken.has_value());
}

void JoinPayloadTest::booleans_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<bool>("expected");

    QTest::newRow("true") << QByteArray("true") << true;
    QTest::newRow("false") << QByteArray("false") << false;
    // Strings "true"/"false" in any letter case (spec §3.2).
    QTest::newRow("\"true\"") << QByteArray(R"("true")") << true;
    QTest::newRow("\"TRUE\"") << QByteArray(R"("TRUE")") << true;
    QTest::newRow("\"tRuE\"") << QByteArray(R"("tRuE")") << true;
    QTest::newRow("\"false\"") << QByteArray(R"("false")") << false;
    QTest::newRow("\"FALSE\"") << QByteArray(R"("FALSE")") << false;
    // Anything else is a wrong type: the default (false).
    QTest::newRow("1") << QByteArray("1") << false;
    QTest::newRow("\"yes\"") << QByteArray(R"("yes")") << false;
    QTest::newRow("\"1\"") << QByteArray(R"("1")") << false;
    QTest::newRow("\" true\"") << QByteArray(R"(" true")") << false;
    QTest::newRow("null") << QByteArray("null") << false;
    QTest::newRow("object") << QByteArray("{}") << false;
    QTest::newRow("array") << QByteArray("[true]") << false;
}

void JoinPayloadTest::booleans()
{
    QFETCH(QByteArray, value);
    QFETCH(bool, expected);

    QCOMPARE(parseJoinConfig(payloadWith("broadcast", "self", value)).broadcastSelf, expected);
    QCOMPARE(parseJoinConfig(payloadWith("broadcast", "ack", value)).broadcastAck, expected);
    QCOMPARE(parseJoinConfig(payloadWith("broadcast", "replication_ready", value)).replicationReady,
             expected);
    QCOMPARE(parseJoinConfig(payloadWith("presence", "enabled", value)).presenceEnabled, expected);
    QCOMPARE(parseJoinConfig(payloadWith(nullptr, "private", value)).isPrivate, expected);
}

void JoinPayloadTest::wrongTypesFallBackToDefaults_data()
{
    QTest::addColumn<QByteArray>("payload");

    QTest::newRow("config is a string") << QByteArray(R"({"config":"x"})");
    QTest::newRow("config is null") << QByteArray(R"({"config":null})");
    QTest::newRow("config is an array") << QByteArray(R"({"config":[1]})");
    QTest::newRow("broadcast is a string") << QByteArray(R"({"config":{"broadcast":"self"}})");
    QTest::newRow("presence is an array")
            << QByteArray(R"({"config":{"presence":[{"enabled":true,"key":"k"}]}})");
    QTest::newRow("postgres_changes is an object")
            << QByteArray(R"({"config":{"postgres_changes":{"event":"*"}}})");
    QTest::newRow("postgres_changes is null")
            << QByteArray(R"({"config":{"postgres_changes":null}})");
    QTest::newRow("private is a number") << QByteArray(R"({"config":{"private":1}})");
}

void JoinPayloadTest::wrongTypesFallBackToDefaults()
{
    QFETCH(QByteArray, payload);

    // The join goes on with the defaults (spec §3.2 "validation is lenient").
    const JoinConfig config = parseJoinConfig(object(payload));
    QVERIFY(config.hasConfig); // a `config` key of any value is not the legacy API
    QCOMPARE(config.broadcastSelf, false);
    QCOMPARE(config.broadcastAck, false);
    QCOMPARE(config.presenceEnabled, false);
    QCOMPARE(config.presenceKey, QByteArray());
    QCOMPARE(config.postgresChanges, QJsonArray());
    QCOMPARE(config.isPrivate, false);
}

void JoinPayloadTest::accessToken_data()
{
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<bool>("present");
    QTest::addColumn<QByteArray>("expected");

    QTest::newRow("access_token") << QByteArray(R"({"config":{},"access_token":"A"})") << true
                                  << QByteArray("A");
    QTest::newRow("user_token") << QByteArray(R"({"config":{},"user_token":"U"})") << true
                                << QByteArray("U");
    // user_token wins if both are present (spec §3.2).
    QTest::newRow("both") << QByteArray(R"({"config":{},"access_token":"A","user_token":"U"})")
                          << true << QByteArray("U");
    QTest::newRow("both, other order")
            << QByteArray(R"({"user_token":"U","config":{},"access_token":"A"})") << true
            << QByteArray("U");
    QTest::newRow("none") << QByteArray(R"({"config":{}})") << false << QByteArray();
    QTest::newRow("not a string") << QByteArray(R"({"config":{},"access_token":5})") << false
                                  << QByteArray();
    QTest::newRow("legacy payload")
            << QByteArray(R"({"access_token":"A"})") << true << QByteArray("A");
}

void JoinPayloadTest::accessToken()
{
    QFETCH(QByteArray, payload);
    QFETCH(bool, present);
    QFETCH(QByteArray, expected);

    const JoinConfig config = parseJoinConfig(object(payload));
    QCOMPARE(config.accessToken.has_value(), present);
    if (present) {
        QCOMPARE(*config.accessToken, expected);
    }
}

void JoinPayloadTest::presenceKey_data()
{
    QTest::addColumn<QByteArray>("key");
    QTest::addColumn<QByteArray>("expected");

    QTest::newRow("string") << QByteArray(R"("user-1")") << QByteArray("user-1");
    QTest::newRow("unicode") << QByteArray(R"("J\u00fcrgen")") << QByteArray("J\xc3\xbcrgen");
    QTest::newRow("integer") << QByteArray("42") << QByteArray("42");
    QTest::newRow("negative") << QByteArray("-7") << QByteArray("-7");
    QTest::newRow("zero") << QByteArray("0") << QByteArray("0");
    QTest::newRow("fraction") << QByteArray("1.5") << QByteArray("1.5");
    QTest::newRow("true") << QByteArray("true") << QByteArray("true");
    QTest::newRow("false") << QByteArray("false") << QByteArray("false");
    QTest::newRow("object") << QByteArray(R"({"id":1})") << QByteArray(R"({"id":1})");
    QTest::newRow("array") << QByteArray("[1,2]") << QByteArray("[1,2]");
    // null and "" mean "generate one" (spec §3.2): empty here.
    QTest::newRow("null") << QByteArray("null") << QByteArray();
    QTest::newRow("empty string") << QByteArray(R"("")") << QByteArray();
}

void JoinPayloadTest::presenceKey()
{
    QFETCH(QByteArray, key);
    QFETCH(QByteArray, expected);

    QCOMPARE(parseJoinConfig(payloadWith("presence", "key", key)).presenceKey, expected);
}

void JoinPayloadTest::largeNumericPresenceKey()
{
    // A number beyond the qint64 range is still a valid JSON key (any JSON value, spec §3.2).
    // It must become a string without undefined behaviour; UBSan (RT_SANITIZE builds) aborts on
    // an out-of-range float-to-integer conversion, so the parse runs in a child process.
    const int status = rt::testsupport::runInChild([] {
        const QByteArray key = parseJoinConfig(payloadWith("presence", "key", "1e300")).presenceKey;
        bool ok = false;
        const double value = key.toDouble(&ok);
        return ok && value == 1e300 ? 0 : 4;
    });
    QVERIFY2(WIFEXITED(status) && WEXITSTATUS(status) == 0,
             qPrintable(QStringLiteral("child status %1").arg(status)));
}

void JoinPayloadTest::postgresChanges_data()
{
    QTest::addColumn<QByteArray>("changes");
    QTest::addColumn<QByteArray>("expected");

    QTest::newRow("null entries dropped")
            << QByteArray(R"([null,{"event":"*","schema":"public"},null,)"
                          R"({"event":"INSERT","table":"t"},null])")
            << QByteArray(R"([{"event":"*","schema":"public"},{"event":"INSERT","table":"t"}])");
    QTest::newRow("only nulls") << QByteArray("[null,null]") << QByteArray("[]");
    QTest::newRow("empty") << QByteArray("[]") << QByteArray("[]");
    QTest::newRow("null list") << QByteArray("null") << QByteArray("[]");
    QTest::newRow("entries kept verbatim")
            << QByteArray(R"([{"event":"UPDATE","schema":"s","table":"t","filter":"id=eq.1",)"
                          R"("select":["id","title"],"extra":{"x":[1]}}])")
            << QByteArray(R"([{"event":"UPDATE","schema":"s","table":"t","filter":"id=eq.1",)"
                          R"("select":["id","title"],"extra":{"x":[1]}}])");
}

void JoinPayloadTest::postgresChanges()
{
    QFETCH(QByteArray, changes);
    QFETCH(QByteArray, expected);

    const JoinConfig config = parseJoinConfig(payloadWith(nullptr, "postgres_changes", changes));
    QCOMPARE(config.postgresChanges, array(expected));
}

void JoinPayloadTest::replayIsKeptAsSent()
{
    const JoinConfig config = parseJoinConfig(
            object(R"({"config":{"broadcast":{"replay":{"since":1700000000000,"limit":10}},)"
                   R"("private":true}})"));
    QVERIFY(config.replay.has_value());
    QCOMPARE(config.replay->toObject(), object(R"({"since":1700000000000,"limit":10})"));
    QVERIFY(config.isPrivate);
    // Invalid replay params are validated later (§3.4 UnableToReplayMessages): kept as sent.
    const JoinConfig invalid =
            parseJoinConfig(object(R"({"config":{"broadcast":{"replay":"yesterday"}}})"));
    QVERIFY(invalid.replay.has_value());
    QCOMPARE(invalid.replay->toString(), QStringLiteral("yesterday"));
}

void JoinPayloadTest::recover_data()
{
    QTest::addColumn<QByteArray>("recover");
    QTest::addColumn<bool>("asked");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<quint64>("epoch");
    QTest::addColumn<quint64>("offset");
    QTest::newRow("absent") << QByteArray() << false << false << quint64{ 0 } << quint64{ 0 };
    QTest::newRow("null asks nothing")
            << QByteArray("null") << false << false << quint64{ 0 } << quint64{ 0 };
    QTest::newRow("position") << QByteArray(R"({"epoch":"00000000000000ff","offset":12})") << true
                              << true << quint64{ 0xff } << quint64{ 12 };
    QTest::newRow("offset 0") << QByteArray(R"({"epoch":"ABCDEF0123456789","offset":0})") << true
                              << true << quint64{ 0xabcdef0123456789ULL } << quint64{ 0 };
    QTest::newRow("largest exact offset")
            << QByteArray(R"({"epoch":"0000000000000001","offset":9007199254740992})") << true
            << true << quint64{ 1 } << quint64{ 9007199254740992ULL };
    const auto invalid = [](const char *name, const char *json) {
        QTest::newRow(name) << QByteArray(json) << true << false << quint64{ 0 } << quint64{ 0 };
    };
    invalid("epoch as number", R"({"epoch":255,"offset":1})");
    invalid("short epoch", R"({"epoch":"ff","offset":1})");
    invalid("epoch zero", R"({"epoch":"0000000000000000","offset":1})");
    invalid("no offset", R"({"epoch":"00000000000000ff"})");
    invalid("offset string", R"({"epoch":"00000000000000ff","offset":"1"})");
    invalid("negative offset", R"({"epoch":"00000000000000ff","offset":-1})");
    invalid("fraction", R"({"epoch":"00000000000000ff","offset":1.5})");
    invalid("beyond 2^53", R"({"epoch":"00000000000000ff","offset":1e300})");
    invalid("not an object", R"("00000000000000ff:1")");
}

void JoinPayloadTest::recover()
{
    QFETCH(QByteArray, recover);
    QFETCH(bool, asked);
    QFETCH(bool, valid);
    QFETCH(quint64, epoch);
    QFETCH(quint64, offset);
    const QByteArray json = recover.isEmpty()
            ? QByteArray(R"({"config":{"broadcast":{}}})")
            : R"({"config":{"broadcast":{"recover":)" + recover + "}}}";
    const JoinConfig config = parseJoinConfig(object(json));
    QCOMPARE(config.recover.has_value(), asked);
    if (asked) {
        QCOMPARE(config.recover->valid, valid);
        QCOMPARE(config.recover->epoch, epoch);
        QCOMPARE(config.recover->offset, offset);
    }
}

void JoinPayloadTest::postgresChangesOptions_data()
{
    QTest::addColumn<QByteArray>("options");
    QTest::addColumn<bool>("wait");
    QTest::addColumn<int>("timeoutMs");
    QTest::newRow("absent") << QByteArray() << false << 15'000;
    QTest::newRow("realtime-js") << QByteArray(R"({"wait":true,"timeout":5000})") << true << 5000;
    QTest::newRow("wait only") << QByteArray(R"({"wait":true})") << true << 15'000;
    QTest::newRow("string true") << QByteArray(R"({"wait":"true"})") << true << 15'000;
    QTest::newRow("wait false") << QByteArray(R"({"wait":false,"timeout":10})") << false << 10;
    QTest::newRow("capped at 20 s")
            << QByteArray(R"({"wait":true,"timeout":600000})") << true << 20'000;
    QTest::newRow("zero keeps the default")
            << QByteArray(R"({"wait":true,"timeout":0})") << true << 15'000;
    QTest::newRow("negative") << QByteArray(R"({"wait":true,"timeout":-5})") << true << 15'000;
    QTest::newRow("fraction") << QByteArray(R"({"wait":true,"timeout":2.5})") << true << 15'000;
    QTest::newRow("not a number") << QByteArray(R"({"wait":true,"timeout":"soon"})") << true
                                  << 15'000;
    QTest::newRow("not an object") << QByteArray(R"("wait")") << false << 15'000;
}

void JoinPayloadTest::postgresChangesOptions()
{
    QFETCH(QByteArray, options);
    QFETCH(bool, wait);
    QFETCH(int, timeoutMs);
    const QByteArray json = options.isEmpty()
            ? QByteArray(R"({"config":{}})")
            : R"({"config":{"postgres_changes_options":)" + options + "}}";
    const JoinConfig config = parseJoinConfig(object(json));
    QCOMPARE(config.postgresChangesWait, wait);
    QCOMPARE(config.postgresChangesTimeoutMs, timeoutMs);
}

void JoinPayloadTest::legacyPayloadWithoutConfig()
{
    // No `config` key at all: the legacy API (§3.2, §6.7).
    const JoinConfig config =
            parseJoinConfig(object(R"({"user_token":"U","broadcast":{"self":true}})"));
    QCOMPARE(config.hasConfig, false);
    QCOMPARE(config.broadcastSelf, false);
    QCOMPARE(config.presenceEnabled, false);
    QCOMPARE(config.postgresChanges, QJsonArray());
    QCOMPARE(config.accessToken, std::optional<QByteArray>("U"));
    QCOMPARE(parseJoinConfig(QJsonObject()).hasConfig, false);
}

void JoinPayloadTest::idsEchoEachEntryVerbatim()
{
    const QJsonArray entries =
            array(R"([{"event":"INSERT","schema":"public","table":"todos","filter":"id=eq.1"},)"
                  R"({"event":"*","schema":"public"},{"table":"t","select":["id","title"]}])");
    const QJsonArray reply = postgresChangesWithIds(entries);
    QCOMPARE(reply.size(), entries.size());
    for (qsizetype i = 0; i < entries.size(); ++i) {
        QJsonObject echoed = reply.at(i).toObject();
        QVERIFY(echoed.contains(QLatin1String("id")));
        QCOMPARE(echoed.value(QLatin1String("id")).toInteger(),
                 postgresChangeId(entries.at(i).toObject()));
        echoed.remove(QStringLiteral("id"));
        // Same keys and values as sent, nothing added but "id", nothing the client omitted.
        QCOMPARE(echoed, entries.at(i).toObject());
    }
}

void JoinPayloadTest::idsAreIntegersBelow2To27()
{
    QJsonArray entries;
    for (int i = 0; i < 500; ++i) {
        QJsonObject entry;
        entry.insert(QStringLiteral("event"), QStringLiteral("*"));
        entry.insert(QStringLiteral("schema"), QStringLiteral("public"));
        entry.insert(QStringLiteral("table"), QStringLiteral("t%1").arg(i));
        entries.append(entry);
    }
    const QJsonArray reply = postgresChangesWithIds(entries);
    for (const QJsonValue &value : reply) {
        const QJsonValue id = value.toObject().value(QLatin1String("id"));
        QVERIFY(id.isDouble());
        const double number = id.toDouble();
        QCOMPARE(number, static_cast<double>(id.toInteger()));
        QVERIFY2(number >= 0 && number < 134217728.0, qPrintable(QString::number(number)));
    }
    // As JSON the id is an integer literal (no fraction or exponent).
    const QByteArray json = QJsonDocument(reply.at(0).toObject()).toJson(QJsonDocument::Compact);
    const qsizetype at = json.indexOf("\"id\":") + 5;
    const QByteArray literal = json.mid(at, json.indexOf(',', at) - at);
    QVERIFY2(!literal.contains('.') && !literal.contains('e'), literal.constData());
}

void JoinPayloadTest::identicalEntriesGetIdenticalIds()
{
    // Equal entries, even with keys in another order or in another join, share the id (§3.4).
    const QJsonArray reply =
            postgresChangesWithIds(array(R"([{"event":"*","schema":"public","table":"a"},)"
                                         R"({"table":"a","schema":"public","event":"*"},)"
                                         R"({"event":"*","schema":"public","table":"a"}])"));
    const qint64 id = reply.at(0).toObject().value(QLatin1String("id")).toInteger();
    QCOMPARE(reply.at(1).toObject().value(QLatin1String("id")).toInteger(), id);
    QCOMPARE(reply.at(2).toObject().value(QLatin1String("id")).toInteger(), id);
    QCOMPARE(postgresChangeId(object(R"({"schema":"public","table":"a","event":"*"})")), id);
}

void JoinPayloadTest::distinctEntriesGetDistinctIds()
{
    const QJsonArray reply = postgresChangesWithIds(
            array(R"([{"event":"*","schema":"public","table":"a"},)"
                  R"({"event":"INSERT","schema":"public","table":"a"},)"
                  R"({"event":"*","schema":"public","table":"b"},)"
                  R"({"event":"*","schema":"other","table":"a"},)"
                  R"({"event":"*","schema":"public","table":"a","filter":"id=eq.1"},)"
                  R"({"event":"*","schema":"public","table":"a","filter":"id=eq.2"}])"));
    QSet<qint64> ids;
    for (const QJsonValue &value : reply) {
        ids.insert(value.toObject().value(QLatin1String("id")).toInteger());
    }
    QCOMPARE(ids.size(), reply.size());
}

void JoinPayloadTest::orderIsKept()
{
    // realtime-js matches reply entries to its bindings by index (§3.4).
    const QJsonArray entries =
            array(R"([{"event":"DELETE","table":"z"},{"event":"INSERT","table":"a"},)"
                  R"({"event":"UPDATE","table":"m"},{"event":"*","table":"b"}])");
    const QJsonArray reply = postgresChangesWithIds(entries);
    QCOMPARE(reply.size(), 4);
    for (qsizetype i = 0; i < entries.size(); ++i) {
        QCOMPARE(reply.at(i).toObject().value(QLatin1String("table")),
                 entries.at(i).toObject().value(QLatin1String("table")));
        QCOMPARE(reply.at(i).toObject().value(QLatin1String("event")),
                 entries.at(i).toObject().value(QLatin1String("event")));
    }
}

void JoinPayloadTest::filterStringsAreUnchanged_data()
{
    QTest::addColumn<QString>("filter");

    QTest::newRow("eq") << QStringLiteral("id=eq.1");
    QTest::newRow("in list") << QStringLiteral("name=in.(alice,bob,\"c d\")");
    QTest::newRow("unicode") << QStringLiteral("title=eq.h\u00e9llo \u4e16\u754c");
    QTest::newRow("quotes and backslash") << QStringLiteral("body=eq.\"a\\\\b\"");
    QTest::newRow("spaces") << QStringLiteral("  id=gte.10  ");
    QTest::newRow("empty") << QString();
}

void JoinPayloadTest::filterStringsAreUnchanged()
{
    QFETCH(QString, filter);

    QJsonObject entry;
    entry.insert(QStringLiteral("event"), QStringLiteral("*"));
    entry.insert(QStringLiteral("schema"), QStringLiteral("public"));
    entry.insert(QStringLiteral("table"), QStringLiteral("t"));
    entry.insert(QStringLiteral("filter"), filter);
    // Through the whole path: join payload text -> parse -> reply.
    const QByteArray payload = R"({"config":{"postgres_changes":[)"
            + QJsonDocument(entry).toJson(QJsonDocument::Compact) + "]}}";
    const JoinConfig config = parseJoinConfig(object(payload));
    const QJsonArray reply = postgresChangesWithIds(config.postgresChanges);
    QCOMPARE(reply.size(), 1);
    QCOMPARE(reply.at(0).toObject().value(QLatin1String("filter")).toString(), filter);
}

void JoinPayloadTest::noEntriesGiveAnEmptyList()
{
    // {"postgres_changes":[]} in the reply (§3.4).
    QCOMPARE(postgresChangesWithIds(QJsonArray()), QJsonArray());
}

QTEST_GUILESS_MAIN(JoinPayloadTest)
#include "tst_join_payload.moc"
