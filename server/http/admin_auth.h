#pragma once

#include "server/wire/http_message.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QStringList>

#include <memory>

namespace rt {
class Clock;
}
namespace rt::auth {
class KeySet;
}

namespace rt::http {

// Operator authentication of the tenant management API (API_JWT_SECRET, API_JWT_SECRET_NEXT,
// API_TOKEN_BLOCKLIST) and of /metrics (METRICS_JWT_SECRET, METRICS_TOKEN_BLOCKLIST), with
// upstream's rules (docs/upstream/tenants-limits-metrics.md §1): exactly one Authorization
// header starting with the case-sensitive "Bearer ", the token URL-decoded and stripped of
// whitespace, not on the blocklist, an HS256/384/512 signature by one of the secrets; `exp` and
// `iat`, when present, must be numbers and `exp` in the future; exp is not required. Unlike
// upstream, the operator API also requires the token's `role` to be one of the operator roles
// (API_JWT_OPERATOR_ROLES): the self-host tenant's client tokens are signed with the same
// secret, and an anon key must not manage the installation. /metrics requires no role.
// Immutable after construction, so every worker thread may use one instance.
class AdminAuth
{
public:
    // Empty secrets are dropped; with none, every request is refused. With `roles` empty, any
    // role (or none) is accepted; otherwise the token's `role` claim must be one of them.
    AdminAuth(const QList<QByteArray> &secrets, QList<QByteArray> blocklist,
              QJsonObject claimValidators, QStringList roles, const Clock &clock);
    ~AdminAuth();
    AdminAuth(const AdminAuth &) = delete;
    AdminAuth &operator=(const AdminAuth &) = delete;

    bool isConfigured() const { return !m_keys.empty(); }
    bool authorises(const wire::HttpRequest &request) const;
    // The same for a WebSocket upgrade, whose clients may not be able to set headers: with no
    // Authorization header, the token may come as the `apikey` query parameter instead.
    bool authorisesUpgrade(const wire::HttpRequest &request) const;

    // Upstream's refusal: 403 with an empty body and no content type.
    static wire::HttpResponse refusal();

    // Splits a comma-separated blocklist, trimming each entry and dropping empty ones.
    static QList<QByteArray> parseBlocklist(QByteArrayView text);

private:
    // A raw token (URL-decoded and stripped here): not blocklisted and signed by a secret.
    bool authorisesToken(QByteArrayView rawToken) const;

    std::vector<std::shared_ptr<const auth::KeySet>> m_keys;
    QList<QByteArray> m_blocklist;
    QJsonObject m_claimValidators;
    QStringList m_roles;
    const Clock &m_clock;
};

} // namespace rt::http
