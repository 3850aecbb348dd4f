#include "server/http/cluster_config_routes.h"

#include "server/http/admin_auth.h"
#include "server/http/logging.h"
#include "server/http/tenant_routes.h"
#include "server/transport/http_connection.h"
#include "server/wire/http_message.h"
#include "shared/api/json_reader.h"
#include "shared/core/json_values.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>

namespace rt::http {

namespace {

using transport::HttpResponder;

const QByteArray RoutePath = QByteArrayLiteral("/api/cluster/config");
const QByteArray KeyRoutePath = QByteArrayLiteral("/api/cluster/config/:key");

wire::HttpResponse jsonResponse(int status, const QJsonObject &body)
{
    wire::HttpResponse response =
            wire::HttpResponse::json(status, QJsonDocument(body).toJson(QJsonDocument::Compact));
    response.setHeader(QByteArrayLiteral("content-type"),
                       QByteArrayLiteral("application/json; charset=utf-8"));
    return response;
}

wire::HttpResponse errorResponse(int status, const QString &message, const QString &key = {})
{
    QJsonObject body{ { QStringLiteral("error"), message } };
    if (!key.isNull()) {
        body.insert(QStringLiteral("key"), key);
    }
    return jsonResponse(status, body);
}

// A stored value for display: the JSON value, or its raw text if it is not JSON (an entry
// written behind the API's back; it is listed as a problem too).
QJsonValue displayValue(const QByteArray &text)
{
    if (std::optional<QJsonValue> value = rt::api::parseJsonValue(text)) {
        return *value;
    }
    return QString::fromUtf8(text);
}

QJsonValue currentJson(const std::optional<cluster::ConfigEntry> &current)
{
    if (!current) {
        return QJsonValue::Null;
    }
    return QJsonObject{
        { QStringLiteral("value"), displayValue(current->value) },
        { QStringLiteral("mod_revision"), current->modRevision },
        { QStringLiteral("temporary"), current->temporary },
    };
}

// The answer to a backend write.
wire::HttpResponse writeAnswer(const cluster::ConfigWriteResult &result, const QString &key,
                               qint64 expectedRevision)
{
    if (result) {
        return jsonResponse(200, QJsonObject{ { QStringLiteral("revision"), *result } });
    }
    const cluster::ConfigWriteError &error = result.error();
    switch (error.kind) {
    case cluster::ConfigWriteError::Kind::Conflict: {
        QString message;
        if (!error.current) {
            message = QStringLiteral("conflict: %1 does not exist (expected_revision %2)")
                              .arg(key)
                              .arg(expectedRevision);
        } else if (expectedRevision == 0) {
            message = QStringLiteral("conflict: %1 already exists (mod_revision %2); send its "
                                     "mod_revision as expected_revision to replace it")
                              .arg(key)
                              .arg(error.current->modRevision);
        } else {
            message = QStringLiteral("conflict: %1 was changed (mod_revision %2, "
                                     "expected_revision %3); nothing was written")
                              .arg(key)
                              .arg(error.current->modRevision)
                              .arg(expectedRevision);
        }
        return jsonResponse(
                409,
                QJsonObject{ { QStringLiteral("error"), message },
                             { QStringLiteral("current"), currentJson(error.current) } });
    }
    case cluster::ConfigWriteError::Kind::Invalid:
        return errorResponse(422, error.message, key);
    case cluster::ConfigWriteError::Kind::Unavailable:
        break;
    }
    return errorResponse(
            503,
            error.message.isEmpty()
                    ? QStringLiteral("the cluster backend is unavailable")
                    : QStringLiteral("the cluster backend is unavailable: %1").arg(error.message));
}

// The write a PUT body asks for.
struct ConfigPut
{
    QByteArray value; // the JSON text to store
    qint64 expectedRevision = 0;
    int ttlSeconds = 0;
};

// The message that refuses a PUT body's first unknown field, if it has one.
std::optional<QString> unknownPutField(const QJsonObject &body)
{
    for (auto it = body.constBegin(); it != body.constEnd(); ++it) {
        if (it.key() != QLatin1String("value") && it.key() != QLatin1String("expected_revision")
            && it.key() != QLatin1String("ttl_seconds")) {
            return QStringLiteral("unknown field \"%1\" (known: value, expected_revision, "
                                  "ttl_seconds)")
                    .arg(it.key());
        }
    }
    return std::nullopt;
}

// A PUT body's fields, or the message of the 422 that refuses them.
Result<ConfigPut, QString> parsePutBody(const QJsonObject &body)
{
    if (std::optional<QString> unknown = unknownPutField(body)) {
        return *unknown;
    }
    if (!body.contains(QLatin1String("value"))) {
        return QStringLiteral("\"value\" is required");
    }
    ConfigPut put;
    const QJsonValue expected = body.value(QLatin1String("expected_revision"));
    if (!expected.isUndefined() && !expected.isNull()) {
        const std::optional<qint64> parsed = json::nonNegativeInteger(expected);
        if (!parsed) {
            return QStringLiteral("expected_revision must be a non-negative integer");
        }
        put.expectedRevision = *parsed;
    }
    const QJsonValue ttl = body.value(QLatin1String("ttl_seconds"));
    if (!ttl.isUndefined() && !ttl.isNull()) {
        const std::optional<qint64> parsed = json::nonNegativeInteger(ttl);
        if (!parsed || *parsed > ClusterConfigRoutes::MaxTtlSeconds) {
            return QStringLiteral("ttl_seconds must be an integer from 0 (permanent) to %1")
                    .arg(ClusterConfigRoutes::MaxTtlSeconds);
        }
        put.ttlSeconds = static_cast<int>(*parsed);
    }
    put.value = rt::api::jsonValueText(body.value(QLatin1String("value")));
    return put;
}

QString keyParam(const RouteParams &params)
{
    return QString::fromUtf8(params.value(QByteArrayLiteral("key")));
}

} // namespace

ClusterConfigRoutes::ClusterConfigRoutes(const AdminAuth &auth, ClusterConfigAccess &access,
                                         Validator validator, KeyValidator keyValidator)
    : m_auth(auth),
      m_access(access),
      m_validator(std::move(validator)),
      m_keyValidator(std::move(keyValidator))
{ }

bool ClusterConfigRoutes::admit(const wire::HttpRequest &request,
                                const HttpResponder &responder) const
{
    if (!acceptsJson(request.header("accept"))) {
        responder.respond(errorResponse(406, QStringLiteral("this API answers JSON only")));
        return false;
    }
    if (!m_auth.authorises(request)) {
        responder.respond(AdminAuth::refusal());
        return false;
    }
    return true;
}

void ClusterConfigRoutes::registerOn(Router &router) const
{
    router.add(QByteArrayLiteral("GET"), RoutePath,
               [this](const wire::HttpRequest &request, const RouteParams &,
                      const HttpResponder &responder) {
                   if (admit(request, responder)) {
                       show(responder);
                   }
               });
    router.add(QByteArrayLiteral("PUT"), KeyRoutePath,
               [this](const wire::HttpRequest &request, const RouteParams &params,
                      const HttpResponder &responder) {
                   if (admit(request, responder)) {
                       put(request, keyParam(params), responder);
                   }
               });
    router.add(QByteArrayLiteral("DELETE"), KeyRoutePath,
               [this](const wire::HttpRequest &request, const RouteParams &params,
                      const HttpResponder &responder) {
                   if (admit(request, responder)) {
                       remove(request, keyParam(params), responder);
                   }
               });
}

void ClusterConfigRoutes::show(const HttpResponder &responder) const
{
    const cluster::ConfigSnapshot snapshot = m_access.snapshot();
    QJsonArray entries;
    QJsonArray problems;
    for (auto it = snapshot.entries.cbegin(); it != snapshot.entries.cend(); ++it) {
        entries.append(QJsonObject{
                { QStringLiteral("key"), it.key() },
                { QStringLiteral("value"), displayValue(it->value) },
                { QStringLiteral("mod_revision"), it->modRevision },
                { QStringLiteral("temporary"), it->temporary },
        });
        if (const std::optional<QString> problem = m_validator(it.key(), it->value)) {
            problems.append(QJsonObject{ { QStringLiteral("key"), it.key() },
                                         { QStringLiteral("message"), *problem } });
        }
    }
    responder.respond(jsonResponse(200,
                                   QJsonObject{
                                           { QStringLiteral("revision"), snapshot.revision },
                                           { QStringLiteral("available"), m_access.isAvailable() },
                                           { QStringLiteral("entries"), entries },
                                           { QStringLiteral("problems"), problems },
                                   }));
}

void ClusterConfigRoutes::put(const wire::HttpRequest &request, const QString &key,
                              const HttpResponder &responder) const
{
    const Result<QJsonObject, json::ObjectError> parsedBody = json::parseObject(request.body);
    if (!parsedBody && parsedBody.error().kind == json::ObjectError::Kind::Syntax) {
        responder.respond(Router::plainBadRequest());
        return;
    }
    if (!parsedBody) {
        responder.respond(errorResponse(
                422, QStringLiteral("the body must be a JSON object {\"value\": ...}"), key));
        return;
    }
    const Result<ConfigPut, QString> parsed = parsePutBody(*parsedBody);
    if (!parsed) {
        responder.respond(errorResponse(422, parsed.error(), key));
        return;
    }
    const ConfigPut &write = *parsed;
    if (const std::optional<QString> invalid = m_validator(key, write.value)) {
        responder.respond(errorResponse(422, *invalid, key));
        return;
    }
    if (!m_access.isAvailable()) {
        responder.respond(errorResponse(
                503, QStringLiteral("the cluster backend is unavailable; nothing was written")));
        return;
    }
    qCInfo(lcHttp).noquote() << "cluster config: put" << key << "expected_revision"
                             << write.expectedRevision << "ttl_seconds" << write.ttlSeconds;
    m_access.put(key, write.value, write.expectedRevision, write.ttlSeconds,
                 [key, expectedRevision = write.expectedRevision,
                  deferred = responder.deferred()](const cluster::ConfigWriteResult &result) {
                     deferred.respond(writeAnswer(result, key, expectedRevision));
                 });
}

void ClusterConfigRoutes::remove(const wire::HttpRequest &request, const QString &key,
                                 const HttpResponder &responder) const
{
    if (const std::optional<QString> invalid = m_keyValidator(key)) {
        responder.respond(errorResponse(422, *invalid, key));
        return;
    }
    qint64 expectedRevision = 0;
    const auto query = wire::parseQuery(request.query);
    const QByteArray expected = wire::queryValue(query, "expected_revision");
    if (!expected.isNull()) {
        bool ok = false;
        expectedRevision = expected.toLongLong(&ok);
        if (!ok || expectedRevision < 0) {
            responder.respond(errorResponse(
                    422, QStringLiteral("expected_revision must be a non-negative integer"), key));
            return;
        }
    }
    if (!m_access.isAvailable()) {
        responder.respond(errorResponse(
                503, QStringLiteral("the cluster backend is unavailable; nothing was deleted")));
        return;
    }
    qCInfo(lcHttp).noquote() << "cluster config: delete" << key << "expected_revision"
                             << expectedRevision;
    m_access.remove(key, expectedRevision,
                    [key, expectedRevision,
                     deferred = responder.deferred()](const cluster::ConfigWriteResult &result) {
                        deferred.respond(writeAnswer(result, key, expectedRevision));
                    });
}

} // namespace rt::http
