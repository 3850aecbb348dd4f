#include "dashboard/api/admin_client.h"

#include "dashboard/api/endpoint.h"
#include "shared/api/json_reader.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

namespace rt::dashboard {

using api::parseJsonValue;

namespace {

const QString SnapshotPath = QStringLiteral("/api/admin/snapshot");
const QString ConfigPath = QStringLiteral("/api/cluster/config");
const QString TenantsPath = QStringLiteral("/api/tenants");

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

// Keys and tenant ids become one path segment; '/' would split it.
bool isPathSegment(const QString &text)
{
    return !text.isEmpty() && !text.contains(u'/');
}

} // namespace

AdminClient::AdminClient(QObject *parent)
    : QObject(parent),
      m_network(new QNetworkAccessManager(this))
{ }

AdminClient::~AdminClient()
{
    // The replies go first, silently: nobody listens to a client being destroyed.
    const QList<AdminReply *> replies = findChildren<AdminReply *>(Qt::FindDirectChildrenOnly);
    for (AdminReply *reply : replies) {
        reply->disconnect();
        delete reply;
    }
}

void AdminClient::abortAll()
{
    const QList<AdminReply *> replies = findChildren<AdminReply *>(Qt::FindDirectChildrenOnly);
    for (AdminReply *reply : replies) {
        reply->abort();
    }
}

QNetworkRequest AdminClient::request(const QString &path, const QUrlQuery &query) const
{
    QNetworkRequest request(adminHttpUrl(m_baseUrl, path, query));
    request.setRawHeader(QByteArrayLiteral("Authorization"),
                         QByteArrayLiteral("Bearer ") + m_token);
    request.setRawHeader(QByteArrayLiteral("Accept"), QByteArrayLiteral("application/json"));
    request.setTransferTimeout(static_cast<int>(m_timeout.count()));
    request.setSslConfiguration(m_ssl);
    // A node never redirects its admin API; following one would carry the operator token to a
    // host nobody admitted (FailoverAllowlist).
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    return request;
}

template <typename Reply>
Reply *AdminClient::send(Reply *reply, const QByteArray &method, const QNetworkRequest &request,
                         const QByteArray &body)
{
    if (m_baseUrl.isEmpty()) {
        return refuse(reply, tr("Not connected to a node."));
    }
    QNetworkRequest withBody = request;
    if (!body.isNull()) {
        withBody.setHeader(QNetworkRequest::ContentTypeHeader,
                           QByteArrayLiteral("application/json"));
    }
    reply->attach(m_network->sendCustomRequest(withBody, method, body));
    ++m_pending;
    Q_EMIT pendingRequestsChanged(m_pending);
    return reply;
}

template <typename Reply>
Reply *AdminClient::refuse(Reply *reply, const QString &text)
{
    ApiError error;
    error.kind = ApiError::Kind::Invalid;
    error.text = text;
    reply->failLater(error);
    return reply;
}

void AdminClient::replyFinished(AdminReply *reply)
{
    // Only replies that were sent were counted.
    if (reply->m_sent) {
        --m_pending;
        Q_EMIT pendingRequestsChanged(m_pending);
    }
}

SnapshotReply *AdminClient::fetchSnapshot(std::optional<std::chrono::milliseconds> timeout)
{
    QNetworkRequest snapshot = request(SnapshotPath);
    if (timeout) {
        snapshot.setTransferTimeout(static_cast<int>(timeout->count()));
    }
    return send(new SnapshotReply(this), "GET", snapshot);
}

ConfigListReply *AdminClient::listConfig()
{
    return send(new ConfigListReply(this), "GET", request(ConfigPath));
}

ConfigEntryReply *AdminClient::getConfig(const QString &key)
{
    return send(new ConfigEntryReply(this, key), "GET", request(ConfigPath));
}

ConfigWriteReply *AdminClient::putConfig(const QString &key, const QByteArray &valueJson,
                                         qint64 expectedRevision)
{
    return writeConfig(key, valueJson, expectedRevision, std::nullopt);
}

ConfigWriteReply *AdminClient::putTemporaryConfig(const QString &key, const QByteArray &valueJson,
                                                  qint64 expectedRevision, std::chrono::seconds ttl)
{
    return writeConfig(key, valueJson, expectedRevision, ttl);
}

ConfigWriteReply *AdminClient::writeConfig(const QString &key, const QByteArray &valueJson,
                                           qint64 expectedRevision,
                                           std::optional<std::chrono::seconds> ttl)
{
    auto *reply = new ConfigWriteReply(this, key);
    if (!isPathSegment(key)) {
        return refuse(reply, tr("\"%1\" is not a configuration key.").arg(key));
    }
    if (ttl && ttl->count() < 1) {
        return refuse(reply, tr("A temporary value needs an expiry of at least one second."));
    }
    QString why;
    const std::optional<QJsonValue> value = parseJsonValue(valueJson, &why);
    if (!value) {
        return refuse(reply, tr("The value of %1 is not valid JSON: %2").arg(key, why));
    }
    QJsonObject body{ { QStringLiteral("value"), *value },
                      { QStringLiteral("expected_revision"), double(expectedRevision) } };
    if (ttl) {
        body.insert(QStringLiteral("ttl_seconds"), double(ttl->count()));
    }
    return send(reply, "PUT", request(ConfigPath + u'/' + key), compact(body));
}

ConfigWriteReply *AdminClient::deleteConfig(const QString &key, qint64 expectedRevision)
{
    auto *reply = new ConfigWriteReply(this, key);
    if (!isPathSegment(key)) {
        return refuse(reply, tr("\"%1\" is not a configuration key.").arg(key));
    }
    QUrlQuery query;
    if (expectedRevision > 0) {
        query.addQueryItem(QStringLiteral("expected_revision"), QString::number(expectedRevision));
    }
    return send(reply, "DELETE", request(ConfigPath + u'/' + key, query));
}

TenantListReply *AdminClient::listTenants()
{
    return send(new TenantListReply(this), "GET", request(TenantsPath));
}

TenantReply *AdminClient::getTenant(const QString &externalId)
{
    auto *reply = new TenantReply(this);
    if (!isPathSegment(externalId)) {
        return refuse(reply, tr("\"%1\" is not a tenant id.").arg(externalId));
    }
    return send(reply, "GET", request(TenantsPath + u'/' + externalId));
}

TenantReply *AdminClient::createTenant(const TenantChanges &tenant)
{
    if (!tenant.externalId || tenant.externalId->isEmpty()) {
        return refuse(new TenantReply(this), tr("A new tenant needs an external id."));
    }
    return writeTenant("POST", TenantsPath, tenant);
}

TenantReply *AdminClient::updateTenant(const QString &externalId, const TenantChanges &changes)
{
    if (!isPathSegment(externalId)) {
        return refuse(new TenantReply(this), tr("\"%1\" is not a tenant id.").arg(externalId));
    }
    return writeTenant("PATCH", TenantsPath + u'/' + externalId, changes);
}

TenantReply *AdminClient::setTenantSuspended(const QString &externalId, bool suspended)
{
    TenantChanges changes;
    changes.suspend = suspended;
    return updateTenant(externalId, changes);
}

TenantReply *AdminClient::writeTenant(const QByteArray &method, const QString &path,
                                      const TenantChanges &changes)
{
    auto *reply = new TenantReply(this);
    return send(reply, method, request(path), compact(changes.toRequestJson()));
}

EmptyReply *AdminClient::deleteTenant(const QString &externalId)
{
    auto *reply = new EmptyReply(this);
    if (!isPathSegment(externalId)) {
        return refuse(reply, tr("\"%1\" is not a tenant id.").arg(externalId));
    }
    return send(reply, "DELETE", request(TenantsPath + u'/' + externalId));
}

} // namespace rt::dashboard
