#include "server/tenants/replica_router.h"

#include <algorithm>

namespace rt::tenants {

QByteArrayView targetLabel(RouteTarget target)
{
    return target == RouteTarget::Replica ? QByteArrayView("replica") : QByteArrayView("primary");
}

QByteArrayView reasonLabel(RouteReason reason)
{
    switch (reason) {
    case RouteReason::Write:
        return "write";
    case RouteReason::NoReplica:
        return "no_replica";
    case RouteReason::RecentWrite:
        return "recent_write";
    case RouteReason::ReplicaDown:
        return "replica_down";
    case RouteReason::ReplicaError:
        return "replica_error";
    case RouteReason::ReplicaBehind:
        return "replica_behind";
    case RouteReason::NoSession:
        return "no_session";
    case RouteReason::DelayElapsed:
        return "delay_elapsed";
    case RouteReason::InvalidSession:
        return "invalid_session";
    case RouteReason::CaughtUp:
        return "caught_up";
    }
    return "unknown";
}

ReplicaRouter::ReplicaRouter(Settings settings, const Clock &clock)
    : m_settings(settings),
      m_clock(clock)
{ }

RouteDecision ReplicaRouter::forWrite() const
{
    return { RouteTarget::Primary, RouteReason::Write };
}

std::optional<RouteDecision> ReplicaRouter::primaryOnly() const
{
    if (!m_settings.replicaConfigured) {
        return RouteDecision{ RouteTarget::Primary, RouteReason::NoReplica };
    }
    if (replicaDown()) {
        return RouteDecision{ RouteTarget::Primary, RouteReason::ReplicaDown };
    }
    return std::nullopt;
}

RouteDecision ReplicaRouter::forApiRead(const ApiSession &session) const
{
    if (session.writeRequest) {
        return forWrite();
    }
    if (!m_settings.replicaConfigured) {
        return { RouteTarget::Primary, RouteReason::NoReplica };
    }
    std::optional<qint64> sinceWrite;
    if (session.lastWriteEpochMs) {
        sinceWrite = m_clock.epochMs() - *session.lastWriteEpochMs;
    }
    const bool believable = sinceWrite && *sinceWrite >= -FutureToleranceMs;
    // A write slightly in the future (another node's clock is ahead) counts as recent.
    if (believable && *sinceWrite < m_settings.delayMs) {
        return { RouteTarget::Primary, RouteReason::RecentWrite };
    }
    if (replicaDown()) {
        return { RouteTarget::Primary, RouteReason::ReplicaDown };
    }
    if (!sinceWrite) {
        return { RouteTarget::Replica, RouteReason::NoSession };
    }
    if (!believable) {
        return { RouteTarget::Replica, RouteReason::InvalidSession };
    }
    return { RouteTarget::Replica, RouteReason::DelayElapsed };
}

bool ReplicaRouter::replicaUsable() const
{
    return !primaryOnly().has_value();
}

RouteDecision ReplicaRouter::forInternalRead(bool caughtUp) const
{
    if (const auto primary = primaryOnly()) {
        return *primary;
    }
    if (!caughtUp) {
        return { RouteTarget::Primary, RouteReason::ReplicaBehind };
    }
    return { RouteTarget::Replica, RouteReason::CaughtUp };
}

void ReplicaRouter::replicaFailed()
{
    m_downUntilMonotonicMs = m_clock.monotonicMs() + m_settings.retryMs;
}

bool ReplicaRouter::replicaDown() const
{
    return m_downUntilMonotonicMs && m_clock.monotonicMs() < *m_downUntilMonotonicMs;
}

std::optional<qint64> parseSessionTimestamp(QByteArrayView value)
{
    const QByteArrayView trimmed = value.trimmed();
    // Digits only (no sign, no spaces inside), at most 15 of them: ms since the epoch have 13
    // until the year 2286; more cannot be a timestamp and could overflow.
    if (trimmed.isEmpty() || trimmed.size() > 15) {
        return std::nullopt;
    }
    qint64 number = 0;
    for (const char c : trimmed) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        number = number * 10 + (c - '0');
    }
    return number;
}

std::optional<qint64> parseSessionCookie(QByteArrayView cookieHeader)
{
    // RFC 6265 §4.2.1: cookie-pair *( ";" SP cookie-pair ); be lenient about spaces. The last
    // readable occurrence wins (a client that sent two has a stale one first, if any).
    std::optional<qint64> found;
    const QByteArrayView name(SessionCookieName);
    qsizetype start = 0;
    while (start <= cookieHeader.size()) {
        qsizetype end = cookieHeader.indexOf(';', start);
        if (end < 0) {
            end = cookieHeader.size();
        }
        const QByteArrayView pair = cookieHeader.sliced(start, end - start).trimmed();
        const qsizetype equals = pair.indexOf('=');
        if (equals > 0 && pair.first(equals).trimmed() == name) {
            QByteArrayView value = pair.sliced(equals + 1).trimmed();
            if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
                value = value.sliced(1, value.size() - 2);
            }
            if (const auto stamp = parseSessionTimestamp(value)) {
                found = stamp;
            }
        }
        start = end + 1;
    }
    return found;
}

std::optional<qint64> latestSession(std::optional<qint64> a, std::optional<qint64> b)
{
    if (a && b) {
        return std::max(*a, *b);
    }
    return a ? a : b;
}

QByteArray sessionSetCookie(qint64 epochMs, qint64 delayMs)
{
    const qint64 maxAgeSeconds = std::max<qint64>(1, (delayMs + 999) / 1000);
    QByteArray cookie(SessionCookieName);
    cookie.append('=').append(QByteArray::number(epochMs));
    cookie.append("; Max-Age=").append(QByteArray::number(maxAgeSeconds));
    cookie.append("; Path=/api/tenants; HttpOnly; SameSite=Strict");
    return cookie;
}

} // namespace rt::tenants
