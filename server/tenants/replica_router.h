#pragma once

#include "shared/core/clock.h"

#include <QByteArray>
#include <QByteArrayView>

#include <optional>

namespace rt::tenants {

// Read/write splitting of the control-plane database (seed 002, Rails' DatabaseSelector):
// writes go to the primary; a read of the tenant API goes to the replica unless the same API
// session wrote less than `delay` ago, so a client always reads its own writes. The node's own
// reads (the tenant cache refresh) use the replica only once it has replayed everything the
// node has already seen, so the cache never goes back in time.
//
// The decisions are pure functions of their inputs and the injected clock; ControlPlane carries
// them out, logs each at debug level (rt.tenants) and counts it
// (qtrealtime_control_plane_routing_total{target,reason}).

enum class RouteTarget { Primary, Replica };

enum class RouteReason {
    // target primary
    Write, // a write, or a read inside a write request (POST/PUT/PATCH/DELETE)
    NoReplica, // no replica is configured
    RecentWrite, // the API session wrote less than the delay ago
    ReplicaDown, // the replica failed less than the retry interval ago
    ReplicaError, // the replica was chosen but failed now; the read was repeated on the primary
    ReplicaBehind, // internal read: the replica has not replayed what the node already saw
    // target replica
    NoSession, // the request carries no session (cookie or header)
    DelayElapsed, // the session's last write is at least the delay old
    InvalidSession, // the session's timestamp is unusable (far in the future)
    CaughtUp, // internal read: the replica has replayed everything the node saw
};

// The metric label values: "primary"/"replica" and e.g. "recent_write".
QByteArrayView targetLabel(RouteTarget target);
QByteArrayView reasonLabel(RouteReason reason);

struct RouteDecision
{
    RouteTarget target = RouteTarget::Primary;
    RouteReason reason = RouteReason::NoReplica;

    bool operator==(const RouteDecision &) const = default;
};

// What a request of the tenant API tells the router.
struct ApiSession
{
    // POST/PUT/PATCH/DELETE: everything it reads comes from the primary (Rails' writing role).
    bool writeRequest = false;
    // When this session last wrote, in ms since the Unix epoch, as its client sent it back
    // (cookie or header); nothing when it sent none (or an unreadable one).
    std::optional<qint64> lastWriteEpochMs;

    static ApiSession write() { return ApiSession{ true, std::nullopt }; }
    static ApiSession read(std::optional<qint64> lastWriteEpochMs)
    {
        return ApiSession{ false, lastWriteEpochMs };
    }
};

// The routing state of one control plane: the settings, and since when the replica is
// considered down. Not thread-safe: used on the control plane's thread only.
class ReplicaRouter
{
public:
    struct Settings
    {
        bool replicaConfigured = false;
        qint64 delayMs = 2000; // read-your-writes window of an API session
        qint64 retryMs = 5000; // after a replica failure, reads use the primary this long
    };
    // A session timestamp further than this in the future is not believed: clocks of nodes
    // behind one load balancer differ by milliseconds, not minutes, and a forged far-future
    // timestamp must not pin a client to the primary forever.
    static constexpr qint64 FutureToleranceMs = 60'000;

    ReplicaRouter(Settings settings, const Clock &clock);

    const Settings &settings() const { return m_settings; }

    // Writes: always the primary.
    RouteDecision forWrite() const;
    // A read of the tenant API (session as sent by the client).
    RouteDecision forApiRead(const ApiSession &session) const;
    // Whether an internal read may try the replica at all (configured and not down); if so,
    // the caller asks the replica how far it has replayed and calls forInternalRead().
    bool replicaUsable() const;
    // An internal read (cache refresh): `caughtUp` says whether the replica has replayed at
    // least everything the node has already loaded from the primary.
    RouteDecision forInternalRead(bool caughtUp) const;

    // The replica failed (connection or query): reads use the primary for retryMs.
    void replicaFailed();
    bool replicaDown() const;

private:
    // The decision before a healthy replica is assumed (no replica or down), if any.
    std::optional<RouteDecision> primaryOnly() const;

    Settings m_settings;
    const Clock &m_clock;
    std::optional<qint64> m_downUntilMonotonicMs;
};

// The API session on the wire: a response to a write sets a cookie (and a header) holding the
// time of the write in ms since the Unix epoch; the client sends either back.
inline constexpr char SessionCookieName[] = "realtime_last_write";
inline constexpr char SessionHeaderName[] = "x-realtime-last-write"; // lower case, as parsed

// The timestamp in a Cookie header value ("a=b; realtime_last_write=1700000000000"), or
// nothing when the cookie is absent or not a plausible decimal timestamp.
std::optional<qint64> parseSessionCookie(QByteArrayView cookieHeader);
// The timestamp of an X-Realtime-Last-Write header value, or nothing.
std::optional<qint64> parseSessionTimestamp(QByteArrayView value);
// The later of the two (a client may send both), or whichever is present.
std::optional<qint64> latestSession(std::optional<qint64> a, std::optional<qint64> b);
// The Set-Cookie value for a write at `epochMs`: it expires with the delay (rounded up to whole
// seconds), is scoped to the tenant API and is not readable by scripts.
QByteArray sessionSetCookie(qint64 epochMs, qint64 delayMs);

} // namespace rt::tenants
