#pragma once

// The etcd v3 JSON gateway's wire format (etcd 3.4, /v3/...), as pure functions: request bodies
// out, responses in. Keys and values are standard base64; int64 fields (revisions, lease ids,
// TTLs) travel as JSON strings (lease ids exceed a double's 53 bits, so they are never read
// through a double); fields with zero/default values are left out of responses. Every decoder
// takes untrusted bytes and answers with an error value, never a crash.
// See toolchain.md §4 for the recipes these follow.

#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

#include <optional>

namespace rt::cluster::etcd {

struct EtcdError
{
    enum class Kind {
        Network, // no answer: connection refused/reset, timeout, DNS
        Http, // an HTTP error status without an etcd error body
        Server, // etcd answered with {"error":..., "code": <gRPC code>}
        Protocol, // the answer could not be understood
        LeaseLost, // keepalive answered without a TTL: the lease expired or was revoked
    };
    Kind kind = Kind::Protocol;
    int code = 0; // gRPC code for Server, HTTP status for Http
    QString message;

    // Worth retrying later / counts as "etcd unreachable" (rather than a refused request).
    bool isUnavailable() const;
    // gRPC NOT_FOUND (5): e.g. "requested lease not found" on a put bound to an expired lease.
    bool isNotFound() const { return kind == Kind::Server && code == 5; }
};

template <typename T>
using EtcdResult = Result<T, EtcdError>;

struct KeyValue
{
    QByteArray key;
    QByteArray value;
    qint64 createRevision = 0;
    qint64 modRevision = 0;
    qint64 version = 0;
    qint64 lease = 0; // 0: not bound to a lease

    friend bool operator==(const KeyValue &, const KeyValue &) = default;
};

struct RangeResponse
{
    qint64 revision = 0;
    QList<KeyValue> kvs;
    bool more = false;
    qint64 count = 0;
};

struct PutResponse
{
    qint64 revision = 0;
    std::optional<KeyValue> prevKv;
};

struct DeleteRangeResponse
{
    qint64 revision = 0;
    qint64 deleted = 0;
    QList<KeyValue> prevKvs;
};

struct LeaseGrantResponse
{
    qint64 revision = 0;
    qint64 id = 0;
    qint64 ttl = 0;
};

struct KeepAliveResponse
{
    qint64 id = 0;
    qint64 ttl = 0; // > 0 (a lost lease decodes as EtcdError::Kind::LeaseLost)
};

struct LeaseTimeToLiveResponse
{
    qint64 id = 0;
    qint64 ttl = 0; // seconds left; < 0: the lease is gone
};

// One comparison of a transaction.
struct Compare
{
    enum class Target { Version, Create, Mod, Value };
    enum class Result { Equal, Greater, Less, NotEqual };
    QByteArray key;
    Target target = Target::Mod;
    Result result = Result::Equal;
    qint64 number = 0; // for Version/Create/Mod
    QByteArray value; // for Value

    static Compare createRevision(const QByteArray &key, qint64 revision)
    {
        return { key, Target::Create, Result::Equal, revision, {} };
    }
    static Compare modRevision(const QByteArray &key, qint64 revision)
    {
        return { key, Target::Mod, Result::Equal, revision, {} };
    }
};

// One operation of a transaction branch.
struct RequestOp
{
    enum class Kind { Range, Put, DeleteRange };
    Kind kind = Kind::Range;
    QByteArray key;
    QByteArray rangeEnd; // Range/DeleteRange: empty = the key alone
    QByteArray value; // Put
    qint64 lease = 0; // Put

    static RequestOp range(const QByteArray &key) { return { Kind::Range, key, {}, {}, 0 }; }
    static RequestOp put(const QByteArray &key, const QByteArray &value, qint64 lease = 0)
    {
        return { Kind::Put, key, {}, value, lease };
    }
    static RequestOp deleteKey(const QByteArray &key)
    {
        return { Kind::DeleteRange, key, {}, {}, 0 };
    }
};

struct TxnRequest
{
    QList<Compare> compare;
    QList<RequestOp> success;
    QList<RequestOp> failure;
};

struct ResponseOp
{
    RequestOp::Kind kind = RequestOp::Kind::Range;
    QList<KeyValue> kvs; // Range
    qint64 deleted = 0; // DeleteRange
};

struct TxnResponse
{
    qint64 revision = 0;
    bool succeeded = false;
    QList<ResponseOp> responses; // of the branch that ran
};

struct WatchEvent
{
    enum class Type { Put, Delete };
    Type type = Type::Put;
    KeyValue kv; // for Delete: key and mod revision (the deletion's revision) only
    std::optional<KeyValue> prevKv;
};

// One message of the watch stream.
struct WatchResponse
{
    qint64 revision = 0; // header revision
    qint64 watchId = 0;
    bool created = false;
    bool canceled = false;
    qint64 compactRevision = 0; // > 0 with canceled: the start revision was compacted away
    QString cancelReason;
    QList<WatchEvent> events;
};

// The range end that selects every key starting with `prefix` (last byte + 1, dropping trailing
// 0xff bytes; "\0" — every key — when the prefix is all 0xff or empty).
QByteArray rangeEndForPrefix(const QByteArray &prefix);

QByteArray encodeRange(const QByteArray &key, const QByteArray &rangeEnd = {});
QByteArray encodePut(const QByteArray &key, const QByteArray &value, qint64 lease = 0);
QByteArray encodeDeleteRange(const QByteArray &key, const QByteArray &rangeEnd = {});
QByteArray encodeTxn(const TxnRequest &request);
QByteArray encodeLeaseGrant(qint64 ttlSeconds);
// Body of keepalive, revoke and timetolive: {"ID":"<id>"}.
QByteArray encodeLeaseId(qint64 id);
// One create_request line for /v3/watch; startRevision 0 = from now.
QByteArray encodeWatchCreate(const QByteArray &key, const QByteArray &rangeEnd,
                             qint64 startRevision, bool prevKv = true);

// Decoders of a response body (any HTTP status: etcd's error bodies are decoded as Server).
EtcdResult<RangeResponse> decodeRange(QByteArrayView body);
EtcdResult<PutResponse> decodePut(QByteArrayView body);
EtcdResult<DeleteRangeResponse> decodeDeleteRange(QByteArrayView body);
EtcdResult<TxnResponse> decodeTxn(QByteArrayView body);
EtcdResult<LeaseGrantResponse> decodeLeaseGrant(QByteArrayView body);
EtcdResult<KeepAliveResponse> decodeKeepAlive(QByteArrayView body);
// Lease time-to-live: the seconds left (etcd omits a zero TTL; a gone lease answers -1).
EtcdResult<LeaseTimeToLiveResponse> decodeLeaseTimeToLive(QByteArrayView body);
// Lease revoke: the header revision.
EtcdResult<qint64> decodeLeaseRevoke(QByteArrayView body);

// etcd v3 authentication: {"name","password"} for /v3/auth/authenticate, and the token of its
// answer (non-empty, at most 4 KiB, printable ASCII: it goes into a header).
QByteArray encodeAuthenticate(const QString &user, const QString &password);
EtcdResult<QByteArray> decodeAuthenticate(QByteArrayView body);
// The etcd error an answer carries, if it is one (any other body: nothing).
std::optional<EtcdError> errorOf(QByteArrayView body);
// etcd refused the call's token (expired, or issued before a restart or a revision bump): a new
// one from the same credentials may succeed.
bool isStaleToken(const EtcdError &error);
// One line of the watch stream ({"result":{...}} or {"error":{...}}).
EtcdResult<WatchResponse> decodeWatchResponse(QByteArrayView line);

// Splits a byte stream into newline-delimited records (NDJSON), whatever the chunk boundaries.
// Pure and resumable: feed() the chunks as they arrive, in order. A '\r' before '\n' is dropped
// and empty lines are skipped. A line longer than maxLineBytes puts the splitter in the failed
// state (the stream must be dropped); feed() then returns nothing until reset().
class NdjsonSplitter
{
public:
    explicit NdjsonSplitter(qsizetype maxLineBytes = qsizetype{ 16 } * 1024 * 1024)
        : m_maxLine(maxLineBytes)
    { }

    QList<QByteArray> feed(QByteArrayView chunk);
    bool failed() const { return m_failed; }
    qsizetype buffered() const { return m_buffer.size(); }
    void reset()
    {
        m_buffer.clear();
        m_failed = false;
    }

private:
    QByteArray m_buffer; // the incomplete last line
    qsizetype m_maxLine;
    bool m_failed = false;
};

} // namespace rt::cluster::etcd
