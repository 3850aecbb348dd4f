#include "dashboard/api/admin_responses.h"

#include "shared/api/json_reader.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QStringList>

namespace rt::dashboard {

using api::JsonReader;
using api::parseJsonValue;

namespace {

bool isSuccess(int status)
{
    return status >= 200 && status < 300;
}

// The 422 {"errors": ...} of the tenant API, flattened: "external_id: can't be blank;
// extensions[1].settings.db_host: can't be blank". Upstream nests objects and arrays.
void flattenErrors(const QJsonValue &value, const QString &path, QStringList &out)
{
    if (value.isObject()) {
        const QJsonObject object = value.toObject();
        for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
            flattenErrors(it.value(), path.isEmpty() ? it.key() : path + u'.' + it.key(), out);
        }
    } else if (value.isArray()) {
        const QJsonArray array = value.toArray();
        bool allText = true;
        for (const auto &item : array) {
            allText = allText && item.isString();
        }
        if (allText) {
            QStringList messages;
            for (const auto &item : array) {
                messages.append(item.toString());
            }
            if (!messages.isEmpty()) {
                out.append(path + QStringLiteral(": ") + messages.join(QStringLiteral(", ")));
            }
            return;
        }
        for (qsizetype i = 0; i < array.size(); ++i) {
            flattenErrors(array.at(i), path + u'[' + QString::number(i) + u']', out);
        }
    } else if (value.isString()) {
        out.append(path + QStringLiteral(": ") + value.toString());
    }
}

// The server's own words from an error body, whatever shape the API uses.
QString serverMessageOf(const QByteArray &body)
{
    const QByteArray trimmed = body.trimmed();
    if (trimmed.isEmpty()) {
        return {};
    }
    const std::optional<QJsonValue> value = parseJsonValue(trimmed);
    if (!value) {
        // Plain text ("Bad Request"); a page of HTML from a proxy is cut short.
        const QString text = QString::fromUtf8(trimmed).simplified();
        return text.size() > 200 ? text.left(200) + QStringLiteral("…") : text;
    }
    if (value->isString()) {
        return value->toString();
    }
    const QJsonObject object = value->toObject();
    for (const char *key : { "error", "message" }) {
        const QJsonValue message = object.value(QLatin1String(key));
        if (message.isString()) {
            return message.toString();
        }
    }
    if (object.contains(QLatin1String("errors"))) {
        QStringList lines;
        flattenErrors(object.value(QLatin1String("errors")), QString(), lines);
        return lines.join(QStringLiteral("; "));
    }
    return {};
}

// A JSON object body, or why not.
Result<QJsonObject, ApiError> objectBody(int status, const QByteArray &body)
{
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        return AdminResponses::jsonError(status,
                                         QStringLiteral("%1 at byte %2")
                                                 .arg(parseError.errorString())
                                                 .arg(parseError.offset));
    }
    if (!document.isObject()) {
        return AdminResponses::jsonError(status, QStringLiteral("not a JSON object"));
    }
    return document.object();
}

// The `current` member of a 409: {"value", "mod_revision", "temporary"} or null.
Result<ConfigConflict, ApiError> readConflict(const QString &key, const QByteArray &body)
{
    Result<QJsonObject, ApiError> object = objectBody(409, body);
    if (!object) {
        return std::move(object).error();
    }
    std::optional<QString> error;
    const JsonReader top(*object, QString(), error);
    ConfigConflict conflict;
    conflict.key = key;
    conflict.current.key = key;
    top.text("error", conflict.serverMessage);
    const QJsonValue current = object->value(QLatin1String("current"));
    if (current.isObject()) {
        conflict.exists = true;
        const JsonReader r(current.toObject(), QStringLiteral("current"), error);
        if (!r.has("value")) {
            error = QStringLiteral("current.value is missing");
        }
        r.jsonText("value", conflict.current.value);
        r.integer("mod_revision", conflict.current.modRevision);
        r.boolean("temporary", conflict.current.temporary);
    } else if (!current.isNull() && !current.isUndefined()) {
        error = QStringLiteral("current must be an object or null");
    }
    if (error) {
        return AdminResponses::jsonError(409, *error);
    }
    return conflict;
}

} // namespace

QString AdminResponses::reasonPhrase(int status)
{
    switch (status) {
    case 400:
        return QStringLiteral("Bad Request");
    case 401:
        return QStringLiteral("Unauthorized");
    case 403:
        return QStringLiteral("Forbidden");
    case 404:
        return QStringLiteral("Not Found");
    case 406:
        return QStringLiteral("Not Acceptable");
    case 409:
        return QStringLiteral("Conflict");
    case 422:
        return QStringLiteral("Unprocessable Entity");
    case 429:
        return QStringLiteral("Too Many Requests");
    case 500:
        return QStringLiteral("Internal Server Error");
    case 502:
        return QStringLiteral("Bad Gateway");
    case 503:
        return QStringLiteral("Service Unavailable");
    case 504:
        return QStringLiteral("Gateway Timeout");
    default:
        return {};
    }
}

ApiError AdminResponses::httpError(int status, const QByteArray &body)
{
    ApiError error;
    error.httpStatus = status;
    error.serverMessage = serverMessageOf(body);
    const QString phrase = reasonPhrase(status);
    const QString statusText = phrase.isEmpty()
            ? QStringLiteral("HTTP %1").arg(status)
            : QStringLiteral("HTTP %1 %2").arg(QString::number(status), phrase);
    if (status == 401 || status == 403) {
        error.kind = ApiError::Kind::Refused;
        error.text = tr("The server refused the operator token (%1). The token must be a JWT "
                        "signed with the cluster's API_JWT_SECRET.")
                             .arg(statusText);
        return error;
    }
    error.kind = ApiError::Kind::Http;
    if (status == 503 && error.serverMessage.isEmpty()) {
        error.text = tr("The server is unavailable (%1).").arg(statusText);
    } else if (error.serverMessage.isEmpty()) {
        error.text = tr("The server answered %1.").arg(statusText);
    } else {
        error.text = tr("The server answered %1: %2").arg(statusText, error.serverMessage);
    }
    return error;
}

ApiError AdminResponses::networkError(ApiError::Kind kind, const QString &detail)
{
    ApiError error;
    error.kind = kind;
    switch (kind) {
    case ApiError::Kind::Timeout:
        error.text = tr("The server did not answer in time.");
        break;
    case ApiError::Kind::Canceled:
        error.text = tr("The request was canceled.");
        break;
    case ApiError::Kind::Untrusted:
        error.text = tr("The node could not be verified (%1). A cluster with a CA of its own needs "
                        "that CA's certificate as the CA file.")
                             .arg(detail);
        break;
    default:
        error.text = detail.isEmpty() ? tr("The server could not be reached.")
                                      : tr("The server could not be reached: %1").arg(detail);
        break;
    }
    return error;
}

ApiError AdminResponses::jsonError(int status, const QString &detail)
{
    ApiError error;
    error.kind = ApiError::Kind::Json;
    error.httpStatus = status;
    error.serverMessage = detail;
    error.text = tr("The server's answer could not be read: %1").arg(detail);
    return error;
}

Result<api::ClusterSnapshot, ApiError> AdminResponses::snapshot(int status, const QByteArray &body)
{
    if (!isSuccess(status)) {
        return httpError(status, body);
    }
    Result<QJsonObject, ApiError> object = objectBody(status, body);
    if (!object) {
        return std::move(object).error();
    }
    Result<api::ClusterSnapshot> snapshot = api::ClusterSnapshot::fromJson(*object);
    if (!snapshot) {
        return jsonError(status, snapshot.error().message);
    }
    return std::move(snapshot).value();
}

Result<ConfigListing, ApiError> AdminResponses::configListing(int status, const QByteArray &body)
{
    if (!isSuccess(status)) {
        return httpError(status, body);
    }
    Result<QJsonObject, ApiError> object = objectBody(status, body);
    if (!object) {
        return std::move(object).error();
    }
    std::optional<QString> error;
    const JsonReader r(*object, QString(), error);
    ConfigListing listing;
    r.integer("revision", listing.revision);
    r.boolean("available", listing.available);
    r.objects("entries", [&](const QJsonObject &item, const QString &path) {
        const JsonReader e(item, path, error);
        api::ConfigValue entry;
        e.text("key", entry.key);
        e.jsonText("value", entry.value);
        e.integer("mod_revision", entry.modRevision);
        e.boolean("temporary", entry.temporary);
        if (entry.key.isEmpty() && !error) {
            error = path + QStringLiteral(".key is missing");
        }
        listing.entries.append(std::move(entry));
    });
    r.objects("problems", [&](const QJsonObject &item, const QString &path) {
        const JsonReader p(item, path, error);
        ConfigProblem problem;
        p.text("key", problem.key);
        p.text("message", problem.message);
        listing.problems.append(std::move(problem));
    });
    if (error) {
        return jsonError(status, *error);
    }
    return listing;
}

ConfigWriteOutcome AdminResponses::configWrite(const QString &key, int status,
                                               const QByteArray &body)
{
    if (status == 409) {
        Result<ConfigConflict, ApiError> conflict = readConflict(key, body);
        if (!conflict) {
            return std::move(conflict).error();
        }
        return std::move(conflict).value();
    }
    if (!isSuccess(status)) {
        return httpError(status, body);
    }
    Result<QJsonObject, ApiError> object = objectBody(status, body);
    if (!object) {
        return std::move(object).error();
    }
    std::optional<QString> error;
    const JsonReader r(*object, QString(), error);
    ConfigWritten written;
    if (!r.has("revision")) {
        error = QStringLiteral("revision is missing");
    }
    r.integer("revision", written.revision);
    if (error) {
        return jsonError(status, *error);
    }
    return written;
}

Result<QList<api::TenantSummary>, ApiError> AdminResponses::tenantList(int status,
                                                                       const QByteArray &body)
{
    if (!isSuccess(status)) {
        return httpError(status, body);
    }
    Result<QList<api::TenantSummary>> tenants = api::TenantSummary::listFromJson(body);
    if (!tenants) {
        return jsonError(status, tenants.error().message);
    }
    return std::move(tenants).value();
}

Result<api::TenantSummary, ApiError> AdminResponses::tenant(int status, const QByteArray &body)
{
    if (!isSuccess(status)) {
        return httpError(status, body);
    }
    Result<api::TenantSummary> tenant = api::TenantSummary::dataFromJson(body);
    if (!tenant) {
        return jsonError(status, tenant.error().message);
    }
    return std::move(tenant).value();
}

std::optional<ApiError> AdminResponses::noContent(int status, const QByteArray &body)
{
    if (!isSuccess(status)) {
        return httpError(status, body);
    }
    return std::nullopt;
}

} // namespace rt::dashboard
