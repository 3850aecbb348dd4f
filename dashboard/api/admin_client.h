#pragma once

#include "dashboard/api/admin_reply.h"
#include "dashboard/api/tenant_changes.h"

#include <QByteArray>
#include <QObject>
#include <QSslConfiguration>
#include <QString>
#include <QUrl>
#include <QUrlQuery>

#include <chrono>
#include <optional>

class QNetworkAccessManager;
class QNetworkRequest;

namespace rt::dashboard {

// The admin, cluster-configuration and tenant APIs of one node (docs/admin-api.md, README
// "Tenants" and "cluster configuration"), over QNetworkAccessManager: every call returns at once
// with a reply object that later emits its typed result or failed() with the error in words.
// Any node answers for the whole cluster; ConnectionManager points the client at the node it
// is connected to (setBaseUrl). Lives on the GUI thread; never blocks it.
class AdminClient : public QObject
{
    Q_OBJECT
public:
    explicit AdminClient(QObject *parent = nullptr);
    ~AdminClient() override;

    // The node's base URL (nodeBaseUrl()); calls made before it is set fail.
    void setBaseUrl(const QUrl &base) { m_baseUrl = base; }
    QUrl baseUrl() const { return m_baseUrl; }
    // The operator token (a JWT signed with API_JWT_SECRET), sent as "Authorization: Bearer".
    void setToken(const QByteArray &token) { m_token = token; }
    // TLS settings of https calls (nodeSslConfiguration()); from the next call on.
    void setSslConfiguration(const QSslConfiguration &configuration) { m_ssl = configuration; }
    // A call without an answer for this long fails with ApiError::Kind::Timeout.
    void setTimeout(std::chrono::milliseconds timeout) { m_timeout = timeout; }

    // Calls in flight (for a progress indicator).
    int pendingRequests() const { return m_pending; }
    // Aborts every call in flight (each fails with kind Canceled).
    void abortAll();

    // GET /api/admin/snapshot; `timeout` (if set) instead of the client's (a failover probe
    // gives up on a silent node sooner than an operator's write).
    SnapshotReply *fetchSnapshot(std::optional<std::chrono::milliseconds> timeout = {});

    // GET /api/cluster/config: every entry, the revision and the entries that do not apply.
    ConfigListReply *listConfig();
    ConfigEntryReply *getConfig(const QString &key);
    // PUT /api/cluster/config/<key>: compare-and-swap of `valueJson` (JSON text of any value)
    // against `expectedRevision` (the key's mod revision; 0: the key must not exist yet).
    ConfigWriteReply *putConfig(const QString &key, const QByteArray &valueJson,
                                qint64 expectedRevision);
    // The same, as a temporary override that the cluster deletes by itself after `ttl` (an etcd
    // lease; at least 1 s). The snapshot marks such entries `temporary`.
    ConfigWriteReply *putTemporaryConfig(const QString &key, const QByteArray &valueJson,
                                         qint64 expectedRevision, std::chrono::seconds ttl);
    // DELETE /api/cluster/config/<key>?expected_revision=N (0: whatever is stored).
    ConfigWriteReply *deleteConfig(const QString &key, qint64 expectedRevision);

    // The tenant API.
    TenantListReply *listTenants();
    TenantReply *getTenant(const QString &externalId);
    // POST /api/tenants: changes.externalId and a JWT secret (or JWKS) are required.
    TenantReply *createTenant(const TenantChanges &tenant);
    // PATCH /api/tenants/<id>: only the fields set in `changes`.
    TenantReply *updateTenant(const QString &externalId, const TenantChanges &changes);
    // PATCH {"tenant": {"suspend": ...}}: a suspended tenant's clients are disconnected and new
    // ones refused (the tenant row's flag; the cluster-wide override is the configuration key
    // tenant_flags.<id>, written with putConfig).
    TenantReply *setTenantSuspended(const QString &externalId, bool suspended);
    EmptyReply *deleteTenant(const QString &externalId);

Q_SIGNALS:
    void pendingRequestsChanged(int pending);
    // Every call that failed, after its reply's failed(): one place to log or show errors so
    // none is swallowed.
    void requestFailed(const rt::dashboard::ApiError &error);

private:
    friend class AdminReply;
    QNetworkRequest request(const QString &path, const QUrlQuery &query = {}) const;
    template <typename Reply>
    Reply *send(Reply *reply, const QByteArray &method, const QNetworkRequest &request,
                const QByteArray &body = {});
    // A call that cannot be sent (no base URL, invalid input): fails on the next event loop turn.
    template <typename Reply>
    Reply *refuse(Reply *reply, const QString &text);
    ConfigWriteReply *writeConfig(const QString &key, const QByteArray &valueJson,
                                  qint64 expectedRevision, std::optional<std::chrono::seconds> ttl);
    TenantReply *writeTenant(const QByteArray &method, const QString &path,
                             const TenantChanges &changes);
    void replyFinished(AdminReply *reply);

    QNetworkAccessManager *m_network = nullptr; // child
    QUrl m_baseUrl;
    QByteArray m_token;
    QSslConfiguration m_ssl;
    std::chrono::milliseconds m_timeout{ 15000 };
    int m_pending = 0;
};

} // namespace rt::dashboard
