// libFuzzer target for what the dashboard reads from a node (or from whatever answers at the
// address an operator typed): every reader of dashboard/api/admin_responses.h (the snapshot,
// the configuration listing and writes, tenant lists and tenants, error bodies) and the live
// feed's frames through LiveFeedProtocol (after a join and a heartbeat, so that replies to
// both are recognised), with the snapshots and tenants of shared/api they decode.
//
// The input's first byte chooses the HTTP status (2xx, 409, 4xx, 5xx and odd ones); the rest is
// the body, and each of its lines is also a live-feed frame, in order. Besides crashes, the
// target aborts when a promise breaks: a non-success status is an error carrying that status
// (Refused exactly for 401 and 403) and a 2xx answer is never an Http error; every error has
// words for the operator; a decoded snapshot or tenant reads back the same from its own JSON;
// listing entries have keys; a join or heartbeat is acknowledged only by a reply with its ref,
// a heartbeat once; a snapshot event holds what parseSnapshot reads from the frame's payload;
// only Ignored and the two acknowledgements come without words.
#include "dashboard/api/admin_responses.h"
#include "dashboard/api/live_feed_protocol.h"
#include "shared/protocol/phoenix_codec.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>

namespace {

using namespace rt::dashboard;
using rt::api::ClusterSnapshot;
using rt::api::TenantSummary;

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

constexpr int Statuses[] = { 200, 201, 204, 299, 409, 400, 401, 403,
                             404, 422, 429, 500, 502, 503, 302, 0 };

bool isSuccess(int status)
{
    return status >= 200 && status < 300;
}

void checkError(const ApiError &error, int status)
{
    require(!error.text.isEmpty());
    require(error.httpStatus == status);
    if (error.kind == ApiError::Kind::Json) {
        return; // a 2xx (or 409) whose body is not what the API promises
    }
    require(!isSuccess(status));
    require((error.kind == ApiError::Kind::Refused) == (status == 401 || status == 403));
    require(error.kind == ApiError::Kind::Refused || error.kind == ApiError::Kind::Http);
}

template <typename T>
void checkResult(const rt::Result<T, ApiError> &result, int status)
{
    if (!result) {
        checkError(result.error(), status);
    } else {
        require(isSuccess(status));
    }
}

void checkSnapshot(const ClusterSnapshot &snapshot)
{
    const auto again = ClusterSnapshot::fromJson(snapshot.toJson());
    require(again.ok() && *again == snapshot);
}

void checkTenant(const TenantSummary &tenant)
{
    require(!tenant.externalId.isEmpty());
    const auto again = TenantSummary::fromJson(tenant.toJson());
    require(again.ok() && *again == tenant);
}

void checkAnswers(int status, const QByteArray &body)
{
    const ApiError words = AdminResponses::httpError(status, body);
    require(!words.text.isEmpty() && words.httpStatus == status);
    require((words.kind == ApiError::Kind::Refused) == (status == 401 || status == 403));
    const auto snapshot = AdminResponses::snapshot(status, body);
    checkResult(snapshot, status);
    if (snapshot) {
        checkSnapshot(*snapshot);
    }
    const auto listing = AdminResponses::configListing(status, body);
    checkResult(listing, status);
    if (listing) {
        for (const rt::api::ConfigValue &entry : listing->entries) {
            require(!entry.key.isEmpty());
        }
    }
    const QString key = QStringLiteral("tenant_limits.acme");
    const ConfigWriteOutcome written = AdminResponses::configWrite(key, status, body);
    if (const auto *error = std::get_if<ApiError>(&written)) {
        checkError(*error, status);
    } else if (const auto *conflict = std::get_if<ConfigConflict>(&written)) {
        require(status == 409 && conflict->key == key && conflict->current.key == key);
    } else {
        require(isSuccess(status));
    }
    const auto tenants = AdminResponses::tenantList(status, body);
    checkResult(tenants, status);
    if (tenants) {
        for (const TenantSummary &tenant : *tenants) {
            checkTenant(tenant);
        }
    }
    const auto tenant = AdminResponses::tenant(status, body);
    checkResult(tenant, status);
    if (tenant) {
        checkTenant(*tenant);
    }
    const std::optional<ApiError> none = AdminResponses::noContent(status, body);
    require(none.has_value() != isSuccess(status));
    if (none) {
        checkError(*none, status);
    }
}

// One frame of the live feed; `acknowledged` counts heartbeat acknowledgements.
void checkFrame(LiveFeedProtocol &feed, QByteArrayView frame, int &acknowledged)
{
    using Kind = LiveFeedProtocol::Event::Kind;
    const bool wasJoined = feed.isJoined();
    const LiveFeedProtocol::Event event = feed.handleFrame(frame);
    const auto message = rt::protocol::decodeText(frame, rt::protocol::Vsn::V1);
    require(message.ok() == (event.kind != Kind::Malformed));
    const bool silent = event.kind == Kind::Ignored || event.kind == Kind::Joined
            || event.kind == Kind::HeartbeatAcknowledged || event.kind == Kind::Snapshot;
    require(silent == event.text.isEmpty());
    switch (event.kind) {
    case Kind::Joined:
        require(message->topic == "admin:cluster" && message->ref == "\"1\"");
        require(feed.isJoined());
        break;
    case Kind::HeartbeatAcknowledged:
        require(message->topic == "phoenix" && message->ref == "\"2\"");
        require(!feed.isHeartbeatPending() && ++acknowledged == 1);
        break;
    case Kind::Snapshot: {
        const auto parsed = LiveFeedProtocol::parseSnapshot(message->payload);
        require(parsed.ok() && *parsed == event.snapshot);
        checkSnapshot(event.snapshot);
        break;
    }
    case Kind::ChannelClosed:
        require(!feed.isJoined());
        break;
    case Kind::JoinRefused:
    case Kind::SnapshotRejected:
    case Kind::Malformed:
    case Kind::Ignored:
        require(feed.isJoined() == wasJoined);
        break;
    }
}

void checkFeed(const QByteArray &body)
{
    LiveFeedProtocol feed;
    require(feed.joinFrame().contains("\"ref\":\"1\""));
    require(feed.heartbeatFrame().contains("\"ref\":\"2\""));
    require(feed.isHeartbeatPending() && !feed.isJoined());
    int acknowledged = 0;
    for (const QByteArray &line : body.split('\n')) {
        checkFrame(feed, line, acknowledged);
    }
    feed.reset();
    require(!feed.isJoined() && !feed.isHeartbeatPending());
    acknowledged = 0;
    checkFrame(feed, body, acknowledged); // no join or heartbeat pending now
    require(!feed.isJoined() && acknowledged == 0);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    const int status = Statuses[data[0] % std::size(Statuses)];
    const QByteArray body(reinterpret_cast<const char *>(data + 1),
                          static_cast<qsizetype>(size - 1));
    checkAnswers(status, body);
    checkFeed(body);
    return 0;
}
