#include "server/cluster/etcd/etcd_json.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QJsonValue>

#include <algorithm>
#include <cmath>

namespace rt::cluster::etcd {

namespace {

EtcdError protocolError(const QString &message)
{
    return EtcdError{ EtcdError::Kind::Protocol, 0, message };
}

QString b64(const QByteArray &bytes)
{
    return QString::fromLatin1(bytes.toBase64());
}

// int64s are sent as strings (etcd accepts both; strings keep lease ids exact).
QString int64String(qint64 value)
{
    return QString::number(value);
}

// An int64 field: absent/null = 0 (etcd leaves zero values out); a string of digits, or a JSON
// number that is an exact integer within a double's exact range.
bool readInt64(const QJsonValue &value, qint64 &out)
{
    if (value.isUndefined() || value.isNull()) {
        out = 0;
        return true;
    }
    if (value.isString()) {
        bool ok = false;
        const qint64 parsed = value.toString().toLongLong(&ok, 10);
        if (!ok) {
            return false;
        }
        out = parsed;
        return true;
    }
    if (value.isDouble()) {
        const double number = value.toDouble();
        if (!std::isfinite(number) || std::floor(number) != number
            || std::fabs(number) > 9007199254740992.0) {
            return false;
        }
        out = static_cast<qint64>(number);
        return true;
    }
    return false;
}

bool readBytes(const QJsonValue &value, QByteArray &out)
{
    if (value.isUndefined() || value.isNull()) {
        out.clear();
        return true;
    }
    if (!value.isString()) {
        return false;
    }
    auto decoded = QByteArray::fromBase64Encoding(value.toString().toLatin1(),
                                                  QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded) {
        return false;
    }
    out = std::move(*decoded);
    return true;
}

bool readBool(const QJsonValue &value, bool &out)
{
    if (value.isUndefined() || value.isNull()) {
        out = false;
        return true;
    }
    if (!value.isBool()) {
        return false;
    }
    out = value.toBool();
    return true;
}

bool readObject(const QJsonValue &value, QJsonObject &out)
{
    if (value.isUndefined() || value.isNull()) {
        out = QJsonObject();
        return true;
    }
    if (!value.isObject()) {
        return false;
    }
    out = value.toObject();
    return true;
}

bool readArray(const QJsonValue &value, QJsonArray &out)
{
    if (value.isUndefined() || value.isNull()) {
        out = QJsonArray();
        return true;
    }
    if (!value.isArray()) {
        return false;
    }
    out = value.toArray();
    return true;
}

// Parses the body; an etcd error body becomes a Server error. Both shapes are handled:
// unary {"error":"...","code":5,"message":"..."} and streamed {"error":{"grpc_code":5,...}}.
EtcdResult<QJsonObject> parseBody(QByteArrayView body)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(body.toByteArray(), &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
        return protocolError(QStringLiteral("etcd answered with something that is not a JSON "
                                            "object (%1)")
                                     .arg(parseError.errorString()));
    }
    const QJsonObject object = document.object();
    const QJsonValue error = object.value(QLatin1String("error"));
    if (!error.isUndefined() && !error.isNull()) {
        EtcdError result{ EtcdError::Kind::Server, 0, {} };
        QJsonObject details = object;
        if (error.isObject()) {
            details = error.toObject();
            const QJsonValue grpc = details.value(QLatin1String("grpc_code"));
            result.code = grpc.isDouble() ? grpc.toInt() : 0;
        } else {
            const QJsonValue code = object.value(QLatin1String("code"));
            result.code = code.isDouble() ? code.toInt() : 0;
        }
        const QJsonValue message = details.value(QLatin1String("message"));
        result.message = message.isString()
                ? message.toString()
                : (error.isString() ? error.toString() : QStringLiteral("etcd error"));
        return result;
    }
    return object;
}

bool readHeaderRevision(const QJsonObject &object, qint64 &revision)
{
    QJsonObject header;
    return readObject(object.value(QLatin1String("header")), header)
            && readInt64(header.value(QLatin1String("revision")), revision);
}

bool readKeyValue(const QJsonValue &value, KeyValue &kv)
{
    QJsonObject object;
    if (!value.isObject()) {
        return false;
    }
    object = value.toObject();
    return readBytes(object.value(QLatin1String("key")), kv.key)
            && readBytes(object.value(QLatin1String("value")), kv.value)
            && readInt64(object.value(QLatin1String("create_revision")), kv.createRevision)
            && readInt64(object.value(QLatin1String("mod_revision")), kv.modRevision)
            && readInt64(object.value(QLatin1String("version")), kv.version)
            && readInt64(object.value(QLatin1String("lease")), kv.lease);
}

bool readKeyValues(const QJsonValue &value, QList<KeyValue> &out)
{
    QJsonArray array;
    if (!readArray(value, array)) {
        return false;
    }
    out.reserve(array.size());
    for (const auto &item : std::as_const(array)) {
        KeyValue kv;
        if (!readKeyValue(item, kv)) {
            return false;
        }
        out.append(std::move(kv));
    }
    return true;
}

bool readRange(const QJsonObject &object, RangeResponse &out)
{
    return readHeaderRevision(object, out.revision)
            && readKeyValues(object.value(QLatin1String("kvs")), out.kvs)
            && readBool(object.value(QLatin1String("more")), out.more)
            && readInt64(object.value(QLatin1String("count")), out.count);
}

QString compareTarget(Compare::Target target)
{
    switch (target) {
    case Compare::Target::Version:
        return QStringLiteral("VERSION");
    case Compare::Target::Create:
        return QStringLiteral("CREATE");
    case Compare::Target::Mod:
        return QStringLiteral("MOD");
    case Compare::Target::Value:
        return QStringLiteral("VALUE");
    }
    return QStringLiteral("MOD");
}

QString compareResult(Compare::Result result)
{
    switch (result) {
    case Compare::Result::Equal:
        return QStringLiteral("EQUAL");
    case Compare::Result::Greater:
        return QStringLiteral("GREATER");
    case Compare::Result::Less:
        return QStringLiteral("LESS");
    case Compare::Result::NotEqual:
        return QStringLiteral("NOT_EQUAL");
    }
    return QStringLiteral("EQUAL");
}

QJsonObject rangeObject(const QByteArray &key, const QByteArray &rangeEnd)
{
    QJsonObject object{ { QStringLiteral("key"), b64(key) } };
    if (!rangeEnd.isEmpty()) {
        object.insert(QStringLiteral("range_end"), b64(rangeEnd));
    }
    return object;
}

QJsonObject putObject(const QByteArray &key, const QByteArray &value, qint64 lease)
{
    QJsonObject object{ { QStringLiteral("key"), b64(key) },
                        { QStringLiteral("value"), b64(value) } };
    if (lease != 0) {
        object.insert(QStringLiteral("lease"), int64String(lease));
    }
    return object;
}

QJsonArray requestOps(const QList<RequestOp> &ops)
{
    QJsonArray array;
    for (const RequestOp &op : ops) {
        switch (op.kind) {
        case RequestOp::Kind::Range:
            array.append(QJsonObject{
                    { QStringLiteral("request_range"), rangeObject(op.key, op.rangeEnd) } });
            break;
        case RequestOp::Kind::Put:
            array.append(QJsonObject{
                    { QStringLiteral("request_put"), putObject(op.key, op.value, op.lease) } });
            break;
        case RequestOp::Kind::DeleteRange:
            array.append(QJsonObject{
                    { QStringLiteral("request_delete_range"), rangeObject(op.key, op.rangeEnd) } });
            break;
        }
    }
    return array;
}

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

// Streamed answers wrap the message: {"result":{...}}.
EtcdResult<QJsonObject> unwrapResult(QByteArrayView body)
{
    auto object = parseBody(body);
    if (!object) {
        return object.error();
    }
    QJsonObject result;
    if (!readObject(object->value(QLatin1String("result")), result)
        || !object->contains(QLatin1String("result"))) {
        return protocolError(QStringLiteral("etcd stream message without a result"));
    }
    return result;
}

} // namespace

bool EtcdError::isUnavailable() const
{
    switch (kind) {
    case Kind::Network:
    case Kind::Protocol:
        return true;
    case Kind::Http:
        return code >= 500 || code == 0;
    case Kind::Server:
        // UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, INTERNAL, UNKNOWN
        return code == 14 || code == 4 || code == 8 || code == 10 || code == 13 || code == 2;
    case Kind::LeaseLost:
        return false;
    }
    return true;
}

QByteArray rangeEndForPrefix(const QByteArray &prefix)
{
    QByteArray end = prefix;
    while (!end.isEmpty()) {
        const auto last = static_cast<unsigned char>(end.back());
        if (last < 0xff) {
            end.back() = static_cast<char>(last + 1);
            return end;
        }
        end.chop(1);
    }
    return { 1, '\0' };
}

QByteArray encodeRange(const QByteArray &key, const QByteArray &rangeEnd)
{
    return compact(rangeObject(key, rangeEnd));
}

QByteArray encodePut(const QByteArray &key, const QByteArray &value, qint64 lease)
{
    return compact(putObject(key, value, lease));
}

QByteArray encodeDeleteRange(const QByteArray &key, const QByteArray &rangeEnd)
{
    return compact(rangeObject(key, rangeEnd));
}

QByteArray encodeTxn(const TxnRequest &request)
{
    QJsonArray compares;
    for (const Compare &compare : request.compare) {
        QJsonObject object{ { QStringLiteral("key"), b64(compare.key) },
                            { QStringLiteral("target"), compareTarget(compare.target) },
                            { QStringLiteral("result"), compareResult(compare.result) } };
        switch (compare.target) {
        case Compare::Target::Version:
            object.insert(QStringLiteral("version"), int64String(compare.number));
            break;
        case Compare::Target::Create:
            object.insert(QStringLiteral("create_revision"), int64String(compare.number));
            break;
        case Compare::Target::Mod:
            object.insert(QStringLiteral("mod_revision"), int64String(compare.number));
            break;
        case Compare::Target::Value:
            object.insert(QStringLiteral("value"), b64(compare.value));
            break;
        }
        compares.append(object);
    }
    return compact(QJsonObject{ { QStringLiteral("compare"), compares },
                                { QStringLiteral("success"), requestOps(request.success) },
                                { QStringLiteral("failure"), requestOps(request.failure) } });
}

QByteArray encodeLeaseGrant(qint64 ttlSeconds)
{
    return compact(QJsonObject{ { QStringLiteral("TTL"), int64String(ttlSeconds) } });
}

QByteArray encodeLeaseId(qint64 id)
{
    return compact(QJsonObject{ { QStringLiteral("ID"), int64String(id) } });
}

QByteArray encodeWatchCreate(const QByteArray &key, const QByteArray &rangeEnd,
                             qint64 startRevision, bool prevKv)
{
    QJsonObject create = rangeObject(key, rangeEnd);
    if (startRevision > 0) {
        create.insert(QStringLiteral("start_revision"), int64String(startRevision));
    }
    if (prevKv) {
        create.insert(QStringLiteral("prev_kv"), true);
    }
    return compact(QJsonObject{ { QStringLiteral("create_request"), create } });
}

EtcdResult<RangeResponse> decodeRange(QByteArrayView body)
{
    auto object = parseBody(body);
    if (!object) {
        return object.error();
    }
    RangeResponse response;
    if (!readRange(*object, response)) {
        return protocolError(QStringLiteral("malformed range response"));
    }
    return response;
}

EtcdResult<PutResponse> decodePut(QByteArrayView body)
{
    auto object = parseBody(body);
    if (!object) {
        return object.error();
    }
    PutResponse response;
    if (!readHeaderRevision(*object, response.revision)) {
        return protocolError(QStringLiteral("malformed put response"));
    }
    const QJsonValue prev = object->value(QLatin1String("prev_kv"));
    if (!prev.isUndefined() && !prev.isNull()) {
        KeyValue kv;
        if (!readKeyValue(prev, kv)) {
            return protocolError(QStringLiteral("malformed put response"));
        }
        response.prevKv = std::move(kv);
    }
    return response;
}

EtcdResult<DeleteRangeResponse> decodeDeleteRange(QByteArrayView body)
{
    auto object = parseBody(body);
    if (!object) {
        return object.error();
    }
    DeleteRangeResponse response;
    if (!readHeaderRevision(*object, response.revision)
        || !readInt64(object->value(QLatin1String("deleted")), response.deleted)
        || !readKeyValues(object->value(QLatin1String("prev_kvs")), response.prevKvs)) {
        return protocolError(QStringLiteral("malformed delete response"));
    }
    return response;
}

EtcdResult<TxnResponse> decodeTxn(QByteArrayView body)
{
    auto object = parseBody(body);
    if (!object) {
        return object.error();
    }
    TxnResponse response;
    QJsonArray responses;
    if (!readHeaderRevision(*object, response.revision)
        || !readBool(object->value(QLatin1String("succeeded")), response.succeeded)
        || !readArray(object->value(QLatin1String("responses")), responses)) {
        return protocolError(QStringLiteral("malformed txn response"));
    }
    for (const auto &item : std::as_const(responses)) {
        if (!item.isObject()) {
            return protocolError(QStringLiteral("malformed txn response op"));
        }
        const QJsonObject op = item.toObject();
        ResponseOp out;
        QJsonObject inner;
        if (op.contains(QLatin1String("response_range"))) {
            out.kind = RequestOp::Kind::Range;
            if (!readObject(op.value(QLatin1String("response_range")), inner)
                || !readKeyValues(inner.value(QLatin1String("kvs")), out.kvs)) {
                return protocolError(QStringLiteral("malformed txn range response"));
            }
        } else if (op.contains(QLatin1String("response_put"))) {
            out.kind = RequestOp::Kind::Put;
            if (!readObject(op.value(QLatin1String("response_put")), inner)) {
                return protocolError(QStringLiteral("malformed txn put response"));
            }
        } else if (op.contains(QLatin1String("response_delete_range"))) {
            out.kind = RequestOp::Kind::DeleteRange;
            if (!readObject(op.value(QLatin1String("response_delete_range")), inner)
                || !readInt64(inner.value(QLatin1String("deleted")), out.deleted)) {
                return protocolError(QStringLiteral("malformed txn delete response"));
            }
        } else {
            return protocolError(QStringLiteral("unknown txn response op"));
        }
        response.responses.append(std::move(out));
    }
    return response;
}

EtcdResult<LeaseGrantResponse> decodeLeaseGrant(QByteArrayView body)
{
    auto object = parseBody(body);
    if (!object) {
        return object.error();
    }
    LeaseGrantResponse response;
    if (!readHeaderRevision(*object, response.revision)
        || !readInt64(object->value(QLatin1String("ID")), response.id)
        || !readInt64(object->value(QLatin1String("TTL")), response.ttl)) {
        return protocolError(QStringLiteral("malformed lease grant response"));
    }
    if (response.id == 0 || response.ttl <= 0) {
        const QJsonValue error = object->value(QLatin1String("error"));
        return EtcdError{ EtcdError::Kind::Server, 0,
                          error.isString() ? error.toString()
                                           : QStringLiteral("lease grant without an id or TTL") };
    }
    return response;
}

EtcdResult<KeepAliveResponse> decodeKeepAlive(QByteArrayView body)
{
    auto result = unwrapResult(body);
    if (!result) {
        return result.error();
    }
    KeepAliveResponse response;
    if (!readInt64(result->value(QLatin1String("ID")), response.id)
        || !readInt64(result->value(QLatin1String("TTL")), response.ttl)) {
        return protocolError(QStringLiteral("malformed keepalive response"));
    }
    // A dead lease is answered with HTTP 200 and no TTL (toolchain.md §4).
    if (response.ttl <= 0) {
        return EtcdError{ EtcdError::Kind::LeaseLost, 0,
                          QStringLiteral("lease %1 expired or was revoked").arg(response.id) };
    }
    return response;
}

EtcdResult<LeaseTimeToLiveResponse> decodeLeaseTimeToLive(QByteArrayView body)
{
    auto object = parseBody(body);
    if (!object) {
        return object.error();
    }
    LeaseTimeToLiveResponse response;
    if (!readInt64(object->value(QLatin1String("ID")), response.id)
        || !readInt64(object->value(QLatin1String("TTL")), response.ttl)) {
        return protocolError(QStringLiteral("malformed lease time-to-live response"));
    }
    return response;
}

QByteArray encodeAuthenticate(const QString &user, const QString &password)
{
    return QJsonDocument(QJsonObject{ { QStringLiteral("name"), user },
                                      { QStringLiteral("password"), password } })
            .toJson(QJsonDocument::Compact);
}

EtcdResult<QByteArray> decodeAuthenticate(QByteArrayView body)
{
    auto object = parseBody(body);
    if (!object) {
        return object.error();
    }
    const QByteArray token = object->value(QLatin1String("token")).toString().toUtf8();
    constexpr qsizetype MaxTokenBytes = 4096;
    const bool printable =
            std::all_of(token.cbegin(), token.cend(), [](char c) { return c > ' ' && c < 127; });
    if (token.isEmpty() || token.size() > MaxTokenBytes || !printable) {
        return protocolError(QStringLiteral("malformed authenticate response (no usable token)"));
    }
    return token;
}

std::optional<EtcdError> errorOf(QByteArrayView body)
{
    auto object = parseBody(body);
    if (!object && object.error().kind == EtcdError::Kind::Server) {
        return object.error();
    }
    return std::nullopt;
}

bool isStaleToken(const EtcdError &error)
{
    // Unauthenticated (16): "invalid auth token"; "revision in header is old" comes as
    // InvalidArgument (3) after the user's permissions changed.
    return error.kind == EtcdError::Kind::Server
            && (error.code == 16 || error.message.contains(QLatin1String("auth token"))
                || error.message.contains(QLatin1String("revision in header is old")));
}

EtcdResult<qint64> decodeLeaseRevoke(QByteArrayView body)
{
    auto object = parseBody(body);
    if (!object) {
        return object.error();
    }
    qint64 revision = 0;
    if (!readHeaderRevision(*object, revision)) {
        return protocolError(QStringLiteral("malformed lease revoke response"));
    }
    return revision;
}

EtcdResult<WatchResponse> decodeWatchResponse(QByteArrayView line)
{
    auto result = unwrapResult(line);
    if (!result) {
        return result.error();
    }
    WatchResponse response;
    QJsonArray events;
    QJsonValue reason = result->value(QLatin1String("cancel_reason"));
    if (!readHeaderRevision(*result, response.revision)
        || !readInt64(result->value(QLatin1String("watch_id")), response.watchId)
        || !readBool(result->value(QLatin1String("created")), response.created)
        || !readBool(result->value(QLatin1String("canceled")), response.canceled)
        || !readInt64(result->value(QLatin1String("compact_revision")), response.compactRevision)
        || !(reason.isUndefined() || reason.isNull() || reason.isString())
        || !readArray(result->value(QLatin1String("events")), events)) {
        return protocolError(QStringLiteral("malformed watch message"));
    }
    response.cancelReason = reason.toString();
    response.events.reserve(events.size());
    for (const auto &item : std::as_const(events)) {
        if (!item.isObject()) {
            return protocolError(QStringLiteral("malformed watch event"));
        }
        const QJsonObject object = item.toObject();
        WatchEvent event;
        const QJsonValue type = object.value(QLatin1String("type"));
        if (type.isUndefined() || type.isNull() || type == QJsonValue(QStringLiteral("PUT"))
            || type == QJsonValue(0)) {
            event.type = WatchEvent::Type::Put;
        } else if (type == QJsonValue(QStringLiteral("DELETE")) || type == QJsonValue(1)) {
            event.type = WatchEvent::Type::Delete;
        } else {
            return protocolError(QStringLiteral("unknown watch event type"));
        }
        if (!readKeyValue(object.value(QLatin1String("kv")), event.kv)) {
            return protocolError(QStringLiteral("malformed watch event"));
        }
        const QJsonValue prev = object.value(QLatin1String("prev_kv"));
        if (!prev.isUndefined() && !prev.isNull()) {
            KeyValue kv;
            if (!readKeyValue(prev, kv)) {
                return protocolError(QStringLiteral("malformed watch event"));
            }
            event.prevKv = std::move(kv);
        }
        response.events.append(std::move(event));
    }
    return response;
}

QList<QByteArray> NdjsonSplitter::feed(QByteArrayView chunk)
{
    QList<QByteArray> lines;
    if (m_failed) {
        return lines;
    }
    qsizetype start = 0;
    while (start < chunk.size()) {
        const qsizetype newline = chunk.indexOf('\n', start);
        if (newline < 0) {
            if (m_buffer.size() + (chunk.size() - start) > m_maxLine) {
                m_failed = true;
                m_buffer.clear();
                return lines;
            }
            m_buffer.append(chunk.sliced(start));
            break;
        }
        if (m_buffer.size() + (newline - start) > m_maxLine) {
            m_failed = true;
            m_buffer.clear();
            return lines;
        }
        m_buffer.append(chunk.sliced(start, newline - start));
        if (m_buffer.endsWith('\r')) {
            m_buffer.chop(1);
        }
        if (!m_buffer.isEmpty()) {
            lines.append(std::move(m_buffer));
        }
        m_buffer = QByteArray();
        start = newline + 1;
    }
    return lines;
}

} // namespace rt::cluster::etcd
