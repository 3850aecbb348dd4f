#include "server/http/admin_auth.h"

#include "server/auth/jwt.h"
#include "server/http/logging.h"
#include "shared/core/clock.h"

#include <QLoggingCategory>

namespace rt::http {

AdminAuth::AdminAuth(const QList<QByteArray> &secrets, QList<QByteArray> blocklist,
                     QJsonObject claimValidators, QStringList roles, const Clock &clock)
    : m_blocklist(std::move(blocklist)),
      m_claimValidators(std::move(claimValidators)),
      m_roles(std::move(roles)),
      m_clock(clock)
{
    for (const QByteArray &secret : secrets) {
        if (secret.isEmpty()) {
            continue;
        }
        Result<std::shared_ptr<const auth::KeySet>> keys = auth::KeySet::build(secret, {});
        if (keys) {
            m_keys.push_back(*keys);
        } else {
            qCWarning(lcHttp) << "an operator secret cannot be used:" << keys.error().message;
        }
    }
}

AdminAuth::~AdminAuth() = default;

wire::HttpResponse AdminAuth::refusal()
{
    return wire::HttpResponse::empty(403);
}

QList<QByteArray> AdminAuth::parseBlocklist(QByteArrayView text)
{
    QList<QByteArray> entries;
    for (const QByteArray &entry : text.toByteArray().split(',')) {
        const QByteArray trimmed = entry.trimmed();
        if (!trimmed.isEmpty()) {
            entries.append(trimmed);
        }
    }
    return entries;
}

bool AdminAuth::authorises(const wire::HttpRequest &request) const
{
    if (m_keys.empty()) {
        return false;
    }
    const QByteArray *authorization = nullptr;
    for (const auto &[name, value] : request.headers) {
        if (name == "authorization") {
            if (authorization != nullptr) {
                return false; // exactly one header, as upstream's pattern match
            }
            authorization = &value;
        }
    }
    static constexpr QByteArrayView Scheme("Bearer ");
    if (authorization == nullptr || !authorization->startsWith(Scheme)) {
        return false;
    }
    return authorisesToken(QByteArrayView(*authorization).sliced(Scheme.size()));
}

bool AdminAuth::authorisesUpgrade(const wire::HttpRequest &request) const
{
    for (const auto &header : request.headers) {
        if (header.first == "authorization") {
            return authorises(request);
        }
    }
    const QByteArray apikey = wire::queryValue(wire::parseQuery(request.query), "apikey");
    return !apikey.isNull() && authorisesToken(apikey);
}

bool AdminAuth::authorisesToken(QByteArrayView rawToken) const
{
    if (m_keys.empty()) {
        return false;
    }
    const QByteArray token = auth::cleanToken(rawToken);
    if (token.isEmpty() || m_blocklist.contains(token)) {
        return false;
    }
    auth::VerifyOptions options;
    options.nowSeconds = m_clock.epochMs() / 1000;
    options.requireRoleAndExp = false;
    options.claimValidators = m_claimValidators;
    for (const std::shared_ptr<const auth::KeySet> &keys : m_keys) {
        const Result<auth::VerifiedToken, auth::JwtError> verified =
                auth::verifyToken(token, *keys, options);
        if (!verified) {
            continue;
        }
        if (m_roles.isEmpty() || m_roles.contains(verified->role)) {
            return true;
        }
        // A valid signature with a client role: the self-host tenant's anon or user token.
        qCInfo(lcHttp) << "operator request refused: role" << verified->role
                       << "is not one of API_JWT_OPERATOR_ROLES";
        return false;
    }
    return false;
}

} // namespace rt::http
