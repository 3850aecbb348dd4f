#pragma once

#include "shared/api/cluster_snapshot.h"
#include "shared/api/tenant_summary.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QList>
#include <QString>

#include <variant>

// What an answer of the admin, configuration and tenant APIs means, as pure functions of
// (HTTP status, body): the DTO, or an error in words. AdminClient calls them when a reply has
// finished; tests call them with recorded answers. Texts are translated (tr()).
namespace rt::dashboard {

struct ApiError
{
    enum class Kind {
        Network, // no answer: refused, unreachable, reset, ...
        Untrusted, // the TLS handshake failed: the node's certificate could not be verified, ...
        Timeout, // no answer in time
        Canceled, // aborted by the dashboard (a new connection, shutdown)
        Refused, // HTTP 401/403: the operator token is not accepted
        Http, // any other non-success status
        Json, // the answer is not what the API promises (not JSON, a field of the wrong type)
        Invalid, // the request was not sent: its input is invalid (e.g. a value that is not JSON)
    };
    Kind kind = Kind::Network;
    int httpStatus = 0; // 0: no HTTP answer
    QString serverMessage; // the server's own words, untranslated (may be empty)
    QString text; // for the operator: what went wrong, in words (translated)
};

// GET /api/cluster/config.
struct ConfigProblem
{
    QString key;
    QString message; // the server's words

    friend bool operator==(const ConfigProblem &, const ConfigProblem &) = default;
};

struct ConfigListing
{
    qint64 revision = 0;
    bool available = false; // false: the answering node does not reach etcd (values may be stale)
    QList<api::ConfigValue> entries; // value: compact JSON text
    QList<ConfigProblem> problems; // stored entries that do not apply (and are ignored)
};

// A compare-and-swap write (PUT) or delete refused because the key is not at the revision the
// request expected: nothing was written. `current` is what is stored now; the operator may
// reapply with current.modRevision as the expected revision (0 when the key does not exist).
struct ConfigConflict
{
    QString key;
    bool exists = false; // false: the key does not exist (any more)
    api::ConfigValue current; // key, value (compact JSON text), modRevision, temporary
    QString serverMessage;
};

// The outcome of a configuration write: the new revision, a conflict, or an error.
struct ConfigWritten
{
    qint64 revision = 0;
};
using ConfigWriteOutcome = std::variant<ConfigWritten, ConfigConflict, ApiError>;

// Namespace-like holder of the pure functions; a class only for tr().
class AdminResponses
{
    Q_DECLARE_TR_FUNCTIONS(AdminResponses)
public:
    // Any non-success answer in words: "HTTP 404 Not Found: not found", 403 as a refused
    // token, 422 with each field's message. Reads the APIs' error shapes: {"error": ...},
    // {"message": ...}, {"errors": {field: [messages]}}, a JSON string, plain text.
    static ApiError httpError(int status, const QByteArray &body);
    // A reply that has no HTTP status: the network error in words.
    static ApiError networkError(ApiError::Kind kind, const QString &detail);
    // A body that is not the promised JSON; `detail` names the field or the parse error.
    static ApiError jsonError(int status, const QString &detail);

    // GET /api/admin/snapshot: 200 with a ClusterSnapshot.
    static Result<api::ClusterSnapshot, ApiError> snapshot(int status, const QByteArray &body);
    // GET /api/cluster/config: 200 {"revision", "available", "entries", "problems"}.
    static Result<ConfigListing, ApiError> configListing(int status, const QByteArray &body);
    // PUT /api/cluster/config/<key> and DELETE: 200 {"revision"}; 409 {"error", "current"}.
    static ConfigWriteOutcome configWrite(const QString &key, int status, const QByteArray &body);
    // GET /api/tenants: 200 {"data": [tenant, ...]}.
    static Result<QList<api::TenantSummary>, ApiError> tenantList(int status,
                                                                  const QByteArray &body);
    // GET, POST, PUT, PATCH /api/tenants[/<id>]: 200 or 201 {"data": tenant}.
    static Result<api::TenantSummary, ApiError> tenant(int status, const QByteArray &body);
    // DELETE /api/tenants/<id>, POST .../reload: 204 (or any 2xx) without a body.
    static std::optional<ApiError> noContent(int status, const QByteArray &body);

    // "HTTP 404 Not Found" style phrases of the statuses the APIs use (else empty).
    static QString reasonPhrase(int status);
};

} // namespace rt::dashboard
