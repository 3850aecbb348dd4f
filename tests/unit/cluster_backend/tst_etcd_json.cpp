// The etcd v3 JSON gateway codec and the NDJSON splitter of the watch stream. The response
// samples below were captured from etcd 3.4.23 (toolchain.md §4 recipe).
#include "server/cluster/etcd/etcd_client.h"
#include "server/cluster/etcd/etcd_json.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace rt::cluster::etcd;

namespace {

const char Header[] =
        R"("header":{"cluster_id":"324952591200643719","member_id":"3319814642761637952",)";

QByteArray sample(const char *body)
{
    return QByteArray(body).replace("HEADER", QByteArray(Header));
}

const char RangeTwo[] =
        R"({HEADER"revision":"3","raft_term":"2"},"kvs":[{"key":"L3cvYQ==","create_revision":"2",)"
        R"("mod_revision":"2","version":"1","value":"aGVsbG8=","lease":"2324035721121358086"},)"
        R"({"key":"L3cvYg==","create_revision":"3","mod_revision":"3","version":"1","value":"eA=="}],)"
        R"("count":"2"})";
const char RangeNone[] = R"({HEADER"revision":"3","raft_term":"2"}})";
const char TxnFailed[] =
        R"({HEADER"revision":"2","raft_term":"2"},"responses":[{"response_range":{"header":)"
        R"({"revision":"2"},"kvs":[{"key":"L3cvYQ==","create_revision":"2","mod_revision":"2",)"
        R"("version":"1","value":"aGVsbG8=","lease":"2324035721121358086"}],"count":"1"}}]})";
const char TxnSucceeded[] = R"({HEADER"revision":"3","raft_term":"2"},"succeeded":true,)"
                            R"("responses":[{"response_put":{"header":{"revision":"3"}}}]})";
const char TxnDeleted[] = R"({HEADER"revision":"5","raft_term":"2"},"succeeded":true,)"
                          R"("responses":[{"response_delete_range":{"header":{"revision":"5"},)"
                          R"("deleted":"1"}}]})";
const char Deleted[] = R"({HEADER"revision":"4","raft_term":"2"},"deleted":"1"})";
const char Grant[] =
        R"({HEADER"revision":"1","raft_term":"2"},"ID":"2324035721121358086","TTL":"5"})";
const char KeepAliveOk[] = R"({"result":{HEADER"revision":"4","raft_term":"2"},)"
                           R"("ID":"2324035721121358086","TTL":"5"}})";
const char KeepAliveDead[] =
        R"({"result":{HEADER"revision":"5","raft_term":"2"},"ID":"2324035721121358086"}})";
const char LeaseNotFound[] = R"({"error":"etcdserver: requested lease not found",)"
                             R"("message":"etcdserver: requested lease not found","code":5})";
const char StreamError[] = R"({"error":{"grpc_code":14,"http_code":503,"message":"no leader",)"
                           R"("http_status":"Service Unavailable"}})";
// Lease time to live (etcd 3.4.23, captured for this test): alive, then after a revoke.
const char TimeToLive[] = R"({HEADER"revision":"1","raft_term":"2"},"ID":"7587899273351987461",)"
                          R"("TTL":"28","grantedTTL":"30"})";
const char TimeToLiveGone[] =
        R"({HEADER"revision":"1","raft_term":"2"},"ID":"7587899273351987461","TTL":"-1"})";
const char WatchCreated[] = R"({"result":{HEADER"revision":"1","raft_term":"2"},"created":true}})";
const char WatchPut[] =
        R"({"result":{HEADER"revision":"2","raft_term":"2"},"events":[{"kv":{"key":"L3cvYQ==",)"
        R"("create_revision":"2","mod_revision":"2","version":"1","value":"aGVsbG8=",)"
        R"("lease":"2324035721121358086"}}]}})";
const char WatchDelete[] =
        R"({"result":{HEADER"revision":"4","raft_term":"2"},"events":[{"type":"DELETE","kv":)"
        R"({"key":"L3cvYg==","mod_revision":"4"},"prev_kv":{"key":"L3cvYg==","create_revision":)"
        R"("3","mod_revision":"3","version":"1","value":"eA=="}}]}})";
const char WatchCompacted[] = R"({"result":{HEADER"raft_term":"2"},"canceled":true,)"
                              R"("compact_revision":"4"}})";

QJsonObject parse(const QByteArray &json)
{
    return QJsonDocument::fromJson(json).object();
}

QString b64(const char *text)
{
    return QString::fromLatin1(QByteArray(text).toBase64());
}

} // namespace

class TstEtcdJson : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void authentication();
    void prefixRangeEnd();
    void encodeRequests();
    void encodeTxnCreateIfAbsent();
    void encodeWatch();
    void range();
    void rangeEmpty();
    void txnFailedAndSucceeded();
    void deleteRange();
    void leaseGrantKeepsIdExact();
    void keepAlive();
    void leaseTimeToLive();
    void errors();
    void watchMessages();
    void malformed_data();
    void malformed();
    void splitterEverySplitPoint();
    void splitterCarriageReturnAndBlankLines();
    void splitterOverlongLine();
    void endpoints();
};

void TstEtcdJson::prefixRangeEnd()
{
    QCOMPARE(rangeEndForPrefix("/qtrealtime/nodes/"), QByteArray("/qtrealtime/nodes0"));
    QCOMPARE(rangeEndForPrefix("a\xff"), QByteArray("b"));
    QCOMPARE(rangeEndForPrefix("\xff\xff"), QByteArray(1, '\0'));
    QCOMPARE(rangeEndForPrefix(QByteArray()), QByteArray(1, '\0'));
}

void TstEtcdJson::encodeRequests()
{
    QCOMPARE(parse(encodeRange("/a")), QJsonObject({ { QStringLiteral("key"), b64("/a") } }));
    const QJsonObject range = parse(encodeRange("/a/", "/a0"));
    QCOMPARE(range.value(QStringLiteral("range_end")).toString(), b64("/a0"));
    const QJsonObject put = parse(encodePut("k", "v", 2324035721121358086));
    QCOMPARE(put.value(QStringLiteral("key")).toString(), b64("k"));
    QCOMPARE(put.value(QStringLiteral("value")).toString(), b64("v"));
    // Lease ids are sent as strings: a double would round 2324035721121358086.
    QCOMPARE(put.value(QStringLiteral("lease")).toString(), QStringLiteral("2324035721121358086"));
    QVERIFY(!parse(encodePut("k", "v")).contains(QStringLiteral("lease")));
    QCOMPARE(parse(encodeLeaseGrant(10)).value(QStringLiteral("TTL")).toString(),
             QStringLiteral("10"));
    QCOMPARE(parse(encodeLeaseId(2324035721121358086)).value(QStringLiteral("ID")).toString(),
             QStringLiteral("2324035721121358086"));
    QCOMPARE(parse(encodeDeleteRange("k")), QJsonObject({ { QStringLiteral("key"), b64("k") } }));
}

void TstEtcdJson::encodeTxnCreateIfAbsent()
{
    TxnRequest txn;
    txn.compare.append(Compare::createRevision("/c/r", 0));
    txn.compare.append(Compare::modRevision("/c/s", 7));
    txn.success.append(RequestOp::put("/c/r", "meta", 42));
    txn.success.append(RequestOp::deleteKey("/c/s"));
    txn.failure.append(RequestOp::range("/c/r"));
    const QJsonObject body = parse(encodeTxn(txn));
    const QJsonArray compare = body.value(QStringLiteral("compare")).toArray();
    QCOMPARE(compare.size(), 2);
    QCOMPARE(compare[0].toObject(),
             QJsonObject({ { QStringLiteral("key"), b64("/c/r") },
                           { QStringLiteral("target"), QStringLiteral("CREATE") },
                           { QStringLiteral("result"), QStringLiteral("EQUAL") },
                           { QStringLiteral("create_revision"), QStringLiteral("0") } }));
    QCOMPARE(compare[1].toObject().value(QStringLiteral("target")).toString(),
             QStringLiteral("MOD"));
    QCOMPARE(compare[1].toObject().value(QStringLiteral("mod_revision")).toString(),
             QStringLiteral("7"));
    const QJsonArray success = body.value(QStringLiteral("success")).toArray();
    QCOMPARE(success.size(), 2);
    const QJsonObject put = success[0].toObject().value(QStringLiteral("request_put")).toObject();
    QCOMPARE(put.value(QStringLiteral("lease")).toString(), QStringLiteral("42"));
    QVERIFY(success[1].toObject().contains(QStringLiteral("request_delete_range")));
    const QJsonArray failure = body.value(QStringLiteral("failure")).toArray();
    QCOMPARE(failure[0].toObject().value(QStringLiteral("request_range")).toObject(),
             QJsonObject({ { QStringLiteral("key"), b64("/c/r") } }));
}

void TstEtcdJson::encodeWatch()
{
    const QByteArray line = encodeWatchCreate("/p/", "/p0", 11);
    QVERIFY(!line.contains('\n'));
    const QJsonObject create = parse(line).value(QStringLiteral("create_request")).toObject();
    QCOMPARE(create.value(QStringLiteral("key")).toString(), b64("/p/"));
    QCOMPARE(create.value(QStringLiteral("range_end")).toString(), b64("/p0"));
    QCOMPARE(create.value(QStringLiteral("start_revision")).toString(), QStringLiteral("11"));
    QCOMPARE(create.value(QStringLiteral("prev_kv")).toBool(), true);
    // Revision 0 means "from now": the field is left out (an empty int64 string is a 400).
    const QJsonObject fromNow = parse(encodeWatchCreate("/p/", "/p0", 0, false))
                                        .value(QStringLiteral("create_request"))
                                        .toObject();
    QVERIFY(!fromNow.contains(QStringLiteral("start_revision")));
    QVERIFY(!fromNow.contains(QStringLiteral("prev_kv")));
}

void TstEtcdJson::range()
{
    const auto response = decodeRange(sample(RangeTwo));
    QVERIFY(response.ok());
    QCOMPARE(response->revision, 3);
    QCOMPARE(response->count, 2);
    QCOMPARE(response->kvs.size(), 2);
    const KeyValue &a = response->kvs[0];
    QCOMPARE(a.key, QByteArray("/w/a"));
    QCOMPARE(a.value, QByteArray("hello"));
    QCOMPARE(a.createRevision, 2);
    QCOMPARE(a.modRevision, 2);
    QCOMPARE(a.version, 1);
    QCOMPARE(a.lease, Q_INT64_C(2324035721121358086));
    QCOMPARE(response->kvs[1].lease, 0); // left out = no lease
}

void TstEtcdJson::rangeEmpty()
{
    const auto response = decodeRange(sample(RangeNone));
    QVERIFY(response.ok());
    QCOMPARE(response->revision, 3);
    QVERIFY(response->kvs.isEmpty());
    QCOMPARE(response->count, 0);
}

void TstEtcdJson::txnFailedAndSucceeded()
{
    const auto failed = decodeTxn(sample(TxnFailed));
    QVERIFY(failed.ok());
    QVERIFY(!failed->succeeded); // "succeeded" is left out when false
    QCOMPARE(failed->revision, 2);
    QCOMPARE(failed->responses.size(), 1);
    QCOMPARE(failed->responses[0].kind, RequestOp::Kind::Range);
    QCOMPARE(failed->responses[0].kvs.size(), 1);
    QCOMPARE(failed->responses[0].kvs[0].value, QByteArray("hello"));

    const auto succeeded = decodeTxn(sample(TxnSucceeded));
    QVERIFY(succeeded.ok());
    QVERIFY(succeeded->succeeded);
    QCOMPARE(succeeded->revision, 3);
    QCOMPARE(succeeded->responses[0].kind, RequestOp::Kind::Put);

    const auto deleted = decodeTxn(sample(TxnDeleted));
    QVERIFY(deleted.ok());
    QCOMPARE(deleted->responses[0].kind, RequestOp::Kind::DeleteRange);
    QCOMPARE(deleted->responses[0].deleted, 1);
}

void TstEtcdJson::deleteRange()
{
    const auto response = decodeDeleteRange(sample(Deleted));
    QVERIFY(response.ok());
    QCOMPARE(response->revision, 4);
    QCOMPARE(response->deleted, 1);
}

void TstEtcdJson::leaseGrantKeepsIdExact()
{
    const auto grant = decodeLeaseGrant(sample(Grant));
    QVERIFY(grant.ok());
    QCOMPARE(grant->id, Q_INT64_C(2324035721121358086));
    QCOMPARE(grant->ttl, 5);
}

void TstEtcdJson::keepAlive()
{
    const auto alive = decodeKeepAlive(sample(KeepAliveOk));
    QVERIFY(alive.ok());
    QCOMPARE(alive->ttl, 5);
    QCOMPARE(alive->id, Q_INT64_C(2324035721121358086));
    // A dead lease answers HTTP 200 without TTL.
    const auto dead = decodeKeepAlive(sample(KeepAliveDead));
    QVERIFY(!dead.ok());
    QCOMPARE(dead.error().kind, EtcdError::Kind::LeaseLost);
    QVERIFY(!dead.error().isUnavailable());
    const auto negative = decodeKeepAlive(QByteArrayView(R"({"result":{"ID":"1","TTL":"-1"}})"));
    QCOMPARE(negative.error().kind, EtcdError::Kind::LeaseLost);
}

void TstEtcdJson::leaseTimeToLive()
{
    const auto alive = decodeLeaseTimeToLive(sample(TimeToLive));
    QVERIFY(alive.ok());
    QCOMPARE(alive->id, Q_INT64_C(7587899273351987461));
    QCOMPARE(alive->ttl, 28);
    const auto gone = decodeLeaseTimeToLive(sample(TimeToLiveGone));
    QVERIFY(gone.ok());
    QCOMPARE(gone->ttl, -1);
    // etcd leaves a zero TTL out (about to expire).
    const auto zero = decodeLeaseTimeToLive(QByteArrayView(R"({"ID":"5"})"));
    QVERIFY(zero.ok());
    QCOMPARE(zero->ttl, 0);
    QVERIFY(!decodeLeaseTimeToLive(QByteArrayView(R"({"ID":"5","TTL":"soon"})")).ok());
    QVERIFY(!decodeLeaseTimeToLive(QByteArrayView("not json")).ok());
}

void TstEtcdJson::errors()
{
    const auto notFound = decodePut(QByteArrayView(LeaseNotFound));
    QVERIFY(!notFound.ok());
    QCOMPARE(notFound.error().kind, EtcdError::Kind::Server);
    QCOMPARE(notFound.error().code, 5);
    QVERIFY(notFound.error().isNotFound());
    QVERIFY(!notFound.error().isUnavailable());
    QCOMPARE(notFound.error().message, QStringLiteral("etcdserver: requested lease not found"));

    const auto streamed = decodeWatchResponse(QByteArrayView(StreamError));
    QVERIFY(!streamed.ok());
    QCOMPARE(streamed.error().kind, EtcdError::Kind::Server);
    QCOMPARE(streamed.error().code, 14);
    QVERIFY(streamed.error().isUnavailable());
    QCOMPARE(streamed.error().message, QStringLiteral("no leader"));
}

void TstEtcdJson::watchMessages()
{
    const auto created = decodeWatchResponse(sample(WatchCreated));
    QVERIFY(created.ok());
    QVERIFY(created->created);
    QCOMPARE(created->revision, 1);
    QCOMPARE(created->watchId, 0); // left out when 0
    QVERIFY(created->events.isEmpty());

    const auto put = decodeWatchResponse(sample(WatchPut));
    QVERIFY(put.ok());
    QCOMPARE(put->revision, 2);
    QCOMPARE(put->events.size(), 1);
    QCOMPARE(put->events[0].type, WatchEvent::Type::Put); // no "type" on PUT events
    QCOMPARE(put->events[0].kv.key, QByteArray("/w/a"));
    QCOMPARE(put->events[0].kv.lease, Q_INT64_C(2324035721121358086));
    QVERIFY(!put->events[0].prevKv);

    const auto deleted = decodeWatchResponse(sample(WatchDelete));
    QVERIFY(deleted.ok());
    QCOMPARE(deleted->events[0].type, WatchEvent::Type::Delete);
    QCOMPARE(deleted->events[0].kv.modRevision, 4);
    QVERIFY(deleted->events[0].prevKv);
    QCOMPARE(deleted->events[0].prevKv->value, QByteArray("x"));

    const auto compacted = decodeWatchResponse(sample(WatchCompacted));
    QVERIFY(compacted.ok());
    QVERIFY(compacted->canceled);
    QCOMPARE(compacted->compactRevision, 4);
}

void TstEtcdJson::malformed_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("not json") << QByteArray("<html>502</html>");
    QTest::newRow("array") << QByteArray("[]");
    QTest::newRow("url-safe base64") << QByteArray(R"({"kvs":[{"key":"-_-_"}]})");
    QTest::newRow("raw text key") << QByteArray(R"({"kvs":[{"key":"/w/a b"}]})");
    QTest::newRow("kvs object") << QByteArray(R"({"kvs":{}})");
    QTest::newRow("kv string") << QByteArray(R"({"kvs":["a"]})");
    QTest::newRow("revision word") << QByteArray(R"({"header":{"revision":"ten"}})");
    QTest::newRow("revision empty") << QByteArray(R"({"header":{"revision":""}})");
    QTest::newRow("revision fraction") << QByteArray(R"({"header":{"revision":1.5}})");
    QTest::newRow("revision huge double") << QByteArray(R"({"header":{"revision":1e30}})");
    QTest::newRow("revision overflow")
            << QByteArray(R"({"header":{"revision":"99999999999999999999"}})");
    QTest::newRow("header array") << QByteArray(R"({"header":[]})");
    QTest::newRow("succeeded string") << QByteArray(R"({"succeeded":"true"})");
    QTest::newRow("unknown op") << QByteArray(R"({"responses":[{"response_x":{}}]})");
    QTest::newRow("op not object") << QByteArray(R"({"responses":[1]})");
    QTest::newRow("result missing") << QByteArray(R"({"header":{}})");
    QTest::newRow("event type") << QByteArray(R"({"result":{"events":[{"type":"MOVE","kv":{}}]}})");
    QTest::newRow("event kv") << QByteArray(R"({"result":{"events":[{"kv":7}]}})");
    QTest::newRow("grant without id") << QByteArray(R"({"TTL":"5"})");
}

void TstEtcdJson::malformed()
{
    QFETCH(QByteArray, body);
    // Every decoder answers with an error value (or a value) — never crashes. Those that must
    // reject this input do.
    const auto range = decodeRange(body);
    const auto txn = decodeTxn(body);
    const auto watch = decodeWatchResponse(body);
    const auto keepAlive = decodeKeepAlive(body);
    const auto grant = decodeLeaseGrant(body);
    (void)decodePut(body);
    (void)decodeDeleteRange(body);
    (void)decodeLeaseRevoke(body);
    QVERIFY(!watch.ok());
    QVERIFY(!keepAlive.ok());
    QVERIFY(!grant.ok());
    const QByteArray tag = QTest::currentDataTag();
    if (tag != "result missing" && tag != "event type" && tag != "event kv"
        && tag != "grant without id") {
        QVERIFY(!range.ok() || !txn.ok());
    }
}

void TstEtcdJson::splitterEverySplitPoint()
{
    const QByteArray stream = sample(WatchCreated) + '\n' + sample(WatchPut) + '\n'
            + sample(WatchDelete) + '\n' + sample(WatchCompacted) + "\n{\"partial";
    const QList<QByteArray> expected{ sample(WatchCreated), sample(WatchPut), sample(WatchDelete),
                                      sample(WatchCompacted) };
    for (qsizetype a = 0; a <= stream.size(); ++a) {
        for (qsizetype b = a; b <= stream.size(); b += 7) {
            NdjsonSplitter splitter;
            QList<QByteArray> lines = splitter.feed(QByteArrayView(stream).first(a));
            lines += splitter.feed(QByteArrayView(stream).sliced(a, b - a));
            lines += splitter.feed(QByteArrayView(stream).sliced(b));
            QCOMPARE(lines, expected);
            QCOMPARE(splitter.buffered(), qsizetype(9)); // {"partial waits for its newline
        }
    }
    // Byte by byte.
    NdjsonSplitter splitter;
    QList<QByteArray> lines;
    for (char c : stream) {
        lines += splitter.feed(QByteArrayView(&c, 1));
    }
    QCOMPARE(lines, expected);
    for (const QByteArray &line : std::as_const(lines)) {
        QVERIFY(decodeWatchResponse(line).ok());
    }
}

void TstEtcdJson::splitterCarriageReturnAndBlankLines()
{
    NdjsonSplitter splitter;
    QCOMPARE(splitter.feed("a\r\n\n\r\nb\n"), QList<QByteArray>({ "a", "b" }));
    QCOMPARE(splitter.feed("c\r"), QList<QByteArray>());
    QCOMPARE(splitter.feed("\nd"), QList<QByteArray>({ "c" }));
}

void TstEtcdJson::splitterOverlongLine()
{
    NdjsonSplitter splitter(8);
    QCOMPARE(splitter.feed("12345678\n"), QList<QByteArray>({ "12345678" }));
    QCOMPARE(splitter.feed("12345"), QList<QByteArray>());
    QVERIFY(!splitter.failed());
    QCOMPARE(splitter.feed("6789"), QList<QByteArray>());
    QVERIFY(splitter.failed());
    QCOMPARE(splitter.buffered(), 0);
    QCOMPARE(splitter.feed("\nok\n"), QList<QByteArray>());
    splitter.reset();
    QCOMPARE(splitter.feed("ok\n"), QList<QByteArray>({ "ok" }));
    NdjsonSplitter inOneChunk(4);
    QCOMPARE(inOneChunk.feed("ab\nabcdef\nxy\n"), QList<QByteArray>({ "ab" }));
    QVERIFY(inOneChunk.failed());
}

void TstEtcdJson::endpoints()
{
    const auto two = EtcdClient::parseEndpoints(
            QStringLiteral(" http://127.0.0.1:2379/ ,https://etcd.example:2379,"));
    QVERIFY(two.ok());
    QCOMPARE(two->size(), 2);
    QCOMPARE(two->at(0), QUrl(QStringLiteral("http://127.0.0.1:2379")));
    QCOMPARE(two->at(1).scheme(), QStringLiteral("https"));
    QVERIFY(!EtcdClient::parseEndpoints(QString()).ok());
    QVERIFY(!EtcdClient::parseEndpoints(QStringLiteral("127.0.0.1:2379")).ok());
    QVERIFY(!EtcdClient::parseEndpoints(QStringLiteral("ftp://h:1")).ok());
    const auto bad = EtcdClient::parseEndpoints(QStringLiteral("http://ok:1,http://"));
    QVERIFY(!bad.ok());
    QVERIFY(bad.error().message.contains(QStringLiteral("http://")));
}

// etcd v3 authentication as etcd 3.4's gateway answers it (bodies taken from a real etcd).
void TstEtcdJson::authentication()
{
    const QJsonObject request =
            parse(encodeAuthenticate(QStringLiteral("realtime"), QStringLiteral("p\"w")));
    QCOMPARE(request.value(QLatin1String("name")).toString(), QStringLiteral("realtime"));
    QCOMPARE(request.value(QLatin1String("password")).toString(), QStringLiteral("p\"w"));

    const auto token =
            decodeAuthenticate(R"({"header":{"revision":"1"},"token":"NpRIKZhOPxAAQDiw.16"})");
    QVERIFY(token);
    QCOMPARE(token.value(), QByteArray("NpRIKZhOPxAAQDiw.16"));
    const auto wrong = decodeAuthenticate(
            R"({"error":"etcdserver: authentication failed, invalid user ID or password",)"
            R"("message":"etcdserver: authentication failed, invalid user ID or password","code":3})");
    QVERIFY(!wrong);
    QCOMPARE(wrong.error().code, 3);
    QVERIFY(!isStaleToken(wrong.error())); // a wrong password is not worth a second try
    // A token that would break the header it goes into is refused.
    QVERIFY(!decodeAuthenticate(R"({"token":"a\r\nX-Injected: 1"})"));
    QVERIFY(!decodeAuthenticate(R"({"token":""})"));

    const auto expired = errorOf(R"({"error":"etcdserver: invalid auth token",)"
                                 R"("message":"etcdserver: invalid auth token","code":16})");
    QVERIFY(expired.has_value());
    QVERIFY(isStaleToken(*expired));
    const auto denied = errorOf(R"({"error":"etcdserver: permission denied",)"
                                R"("message":"etcdserver: permission denied","code":7})");
    QVERIFY(denied.has_value());
    QVERIFY(!isStaleToken(*denied));
    QVERIFY(!errorOf(R"({"header":{"revision":"2"}})").has_value());
    QVERIFY(!errorOf("not json").has_value());
}

QTEST_GUILESS_MAIN(TstEtcdJson)
#include "tst_etcd_json.moc"
