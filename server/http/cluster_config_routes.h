#pragma once

#include "server/cluster/types.h"
#include "server/http/router.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <functional>
#include <optional>

namespace rt::http {

class AdminAuth;

// What the configuration admin API needs from the cluster backend. Implemented by the app on
// the cluster thread (ClusterBackend lives there); every method may be called from any worker
// thread, so an implementation posts put()/remove() to its thread and keeps a mutex-guarded
// copy of the snapshot. `done` must be called exactly once, from any thread (a backend that is
// being destroyed still answers, with Unavailable), and never from inside put()/remove() while
// holding a lock the caller could need.
class ClusterConfigAccess
{
public:
    virtual ~ClusterConfigAccess() = default;
    using Done = std::function<void(cluster::ConfigWriteResult)>;

    // This node's last known configuration (kept while the backend is unreachable).
    virtual cluster::ConfigSnapshot snapshot() const = 0;
    // Whether the backend is reachable now; false: the snapshot may be stale ("degraded").
    virtual bool isAvailable() const = 0;
    // ClusterBackend::putConfig: compare-and-swap on the key's mod revision (0 = must not
    // exist); ttlSeconds > 0 makes the entry temporary (bound to a lease of that TTL).
    virtual void put(const QString &key, const QByteArray &value, qint64 expectedModRevision,
                     int ttlSeconds, Done done) = 0;
    // ClusterBackend::deleteConfig: deletes if the mod revision matches (0 = unconditionally).
    virtual void remove(const QString &key, qint64 expectedModRevision, Done done) = 0;
};

// The cluster configuration admin API (issue 5 part 9), authorised like the tenant API
// (a JWT signed with API_JWT_SECRET, AdminAuth; 406 if the client refuses JSON):
//
//   GET /api/cluster/config
//       200 {"revision": N, "available": bool,
//            "entries": [{"key", "value" (the JSON value itself), "mod_revision",
//                         "temporary"}],
//            "problems": [{"key", "message"}]}            (entries that do not apply, ignored)
//   PUT /api/cluster/config/:key
//       body {"value": <json>, "expected_revision": N (0 or absent: the key must not exist),
//             "ttl_seconds": T (optional; > 0: temporary, expires by itself)}
//       200 {"revision": <revision of the write>}
//       409 {"error", "current": {"value", "mod_revision", "temporary"} | null}: nothing written
//       422 {"error", "key"}: the key or value is invalid (checked here, before the backend),
//           or bad expected_revision/ttl_seconds
//       503 {"error"}: the backend is unreachable; nothing is known to be written
//       400 "Bad Request" for a body that is not JSON.
//   DELETE /api/cluster/config/:key?expected_revision=N   (absent or 0: unconditionally)
//       200 {"revision": N} / 409 as above / 422 (malformed key) / 503
//
// A write answers once the backend has answered (from whichever thread `done` runs on,
// through a DeferredResponder), so "200" means the write is in the cluster. Immutable after
// construction: one instance serves every worker.
class ClusterConfigRoutes
{
public:
    // Why a value may not be stored under a key (nullopt: it may): the configuration schema
    // (app::validateConfigEntry). Also used to list the problems of stored entries. Must be
    // thread-safe (a pure function).
    using Validator = std::function<std::optional<QString>(const QString &key, QByteArrayView)>;
    // Whether a key name is acceptable at all (for DELETE, which must be able to remove an
    // entry of an unknown kind); app::validateConfigKeyName.
    using KeyValidator = std::function<std::optional<QString>(const QString &key)>;

    ClusterConfigRoutes(const AdminAuth &auth, ClusterConfigAccess &access, Validator validator,
                        KeyValidator keyValidator);

    void registerOn(Router &router) const;

    // Bounds of a PUT's ttl_seconds: etcd leases beyond a year are not overrides any more.
    static constexpr qint64 MaxTtlSeconds = 366LL * 24 * 3600;

private:
    bool admit(const wire::HttpRequest &request, const transport::HttpResponder &responder) const;
    void show(const transport::HttpResponder &responder) const;
    void put(const wire::HttpRequest &request, const QString &key,
             const transport::HttpResponder &responder) const;
    void remove(const wire::HttpRequest &request, const QString &key,
                const transport::HttpResponder &responder) const;

    const AdminAuth &m_auth;
    ClusterConfigAccess &m_access;
    Validator m_validator;
    KeyValidator m_keyValidator;
};

} // namespace rt::http
