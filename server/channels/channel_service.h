#pragma once

#include "server/cdc/cdc_service.h"
#include "server/channels/channel.h"
#include "server/channels/channel_context.h"
#include "server/channels/join_payload.h"
#include "server/channels/socket_state.h"
#include "shared/protocol/phoenix_message.h"

#include <QString>

#include <memory>
#include <optional>

namespace rt::channels {

class ClientLink;

// Phoenix channel semantics of Supabase Realtime's RealtimeChannel (spec §3-§5): joins with
// their checks in upstream's order, and the events of a joined channel, each handled by its own
// handler (broadcast, presence, access_token). One per worker; worker thread only. The gateway
// session owns the channels and routes frames here; nothing here touches sockets directly.
class ChannelService
{
public:
    explicit ChannelService(ChannelContext context);

    ChannelContext &context() { return m_context; }

    struct JoinResult
    {
        std::unique_ptr<Channel> channel; // set on success; the reply is already queued
        bool closeSocket = false; // TenantNotFound: close the socket with 1001 (spec §1.6)
        // The join waits for the tenant database; it ends with ClientLink::joinFinished().
        bool pending = false;
    };
    // Runs the join checks for `message` (a phx_join whose topic starts with "realtime:"),
    // replies ok (and schedules presence_state) or replies the error after the backoff.
    JoinResult join(SocketState &socket, ClientLink &link, const protocol::InboundMessage &message);

    // What a channel event asks the session to do next.
    enum class Outcome {
        Continue,
        CloseChannel, // the channel was shut down (system error + phx_close already pushed)
    };
    Outcome handleEvent(SocketState &socket, Channel &channel,
                        const protocol::InboundMessage &message);

    // Pushes a system error + phx_close and releases the channel (spec §3.5 shutdown).
    void shutdown(SocketState &socket, Channel &channel, const QString &message);
    // Releases a channel (leave, rejoin, socket closed): hub, presence, counters. No frames.
    void release(SocketState &socket, Channel &channel);
    // Releases what the socket holds after its last channel is gone.
    void releaseSocket(SocketState &socket);

    // Periodic checks of one channel (token expiry). Returns CloseChannel if it was shut down.
    Outcome tick(SocketState &socket, Channel &channel, qint64 nowSeconds);

    // Sends presence_state to the channel once the store answers.
    void requestPresenceState(Channel &channel);

    // Sends the channel's postgres_changes bindings to the tenant database (again after a token
    // refresh); the outcome arrives as a `system` message.
    // With `done`, the outcome goes there instead (a join that waits for it).
    void subscribeToChanges(SocketState &socket, Channel &channel,
                            std::function<void(const cdc::SubscribeOutcome &)> done = {});
    // The identity a private channel's RLS checks run as (spec §7.1).
    static cdc::AuthorizationRequest authorizationRequest(const SocketState &socket,
                                                          const QByteArray &subTopic,
                                                          const QJsonObject &claims);

private:
    struct JoinRequest;
    struct JoinRefusal
    {
        QString reason; // the join error's reason
        bool closeSocket = false; // the socket goes too (unknown tenant, joins rate)
    };
    // Refusals before the tenant's limits: no topic, shutting down, unknown tenant.
    std::optional<JoinRefusal> socketRefusal(const SocketState &socket,
                                             const QByteArray &subTopic) const;
    // The tenant's limits (private only, users, joins per second, channels per client); counts
    // the join against the joins rate once it passes the users check.
    std::optional<JoinRefusal> limitRefusal(SocketState &socket, const tenants::Tenant &tenant,
                                            const JoinConfig &config);
    // Step 9: the tenant database, asynchronously; ends in ClientLink::joinFinished().
    void joinThroughDatabase(SocketState &socket, ClientLink &link,
                             const std::shared_ptr<const JoinRequest> &request);
    // The channel as the join asks for it, not yet subscribed anywhere.
    std::unique_ptr<Channel> makeChannel(SocketState &socket, ClientLink &link,
                                         const JoinRequest &request,
                                         const QByteArray &joinRef) const;
    // postgres_changes (or the error that no database is configured) and replication_ready.
    // `subscribe` false: the bindings were registered already (a join that waited for them).
    void startChanges(SocketState &socket, Channel &channel, const tenants::TenantPtr &tenant,
                      bool subscribe);
    // Counts the socket as a user of its tenant (refusing the join when the tenant is full),
    // then completes the join: now (returns the channel), or, with `deferred` set, once the
    // other nodes route the tenant here (then ClientLink::joinFinished() ends it). nullptr and
    // not deferred: refused, the error was replied.
    std::unique_ptr<Channel>
    admitAndComplete(SocketState &socket, ClientLink &link,
                     const std::shared_ptr<const JoinRequest> &request,
                     const std::shared_ptr<const cdc::CdcService::ChannelAccess> &access,
                     bool &deferred);
    // After the tenant is reachable: (in a cluster) once its home is known, the join itself,
    // now or (deferred) later, as admitAndComplete.
    std::unique_ptr<Channel>
    completeAdmitted(SocketState &socket, ClientLink &link,
                     const std::shared_ptr<const JoinRequest> &request,
                     const std::shared_ptr<const cdc::CdcService::ChannelAccess> &access,
                     bool &deferred);
    // How long a join waits for its tenant's home to be known (a claim: one etcd round trip
    // and the placement's ask, usually milliseconds).
    static constexpr int HomeWaitMs = 2000;
    // The channel itself: subscription, reply, presence state, postgres_changes.
    std::unique_ptr<Channel> completeJoin(SocketState &socket, ClientLink &link,
                                          const JoinRequest &request,
                                          const cdc::CdcService::ChannelAccess *access);
    // The channel with the rights the checks gave it, not yet subscribed anywhere.
    std::unique_ptr<Channel> prepareChannel(SocketState &socket, ClientLink &link,
                                            const JoinRequest &request,
                                            const cdc::CdcService::ChannelAccess *access);
    // Hub subscription, join reply, replay, presence state, postgres_changes.
    void openChannel(SocketState &socket, ClientLink &link, const JoinRequest &request,
                     Channel &channel, const cdc::CdcService::ChannelAccess *access,
                     bool subscribeChanges);
    // Join reply, what the history returned, replay, presence state, postgres_changes.
    void finishOpening(SocketState &socket, ClientLink &link, const JoinRequest &request,
                       Channel &channel, const cdc::CdcService::ChannelAccess *access,
                       bool subscribeChanges, const QJsonObject &response,
                       const std::vector<pubsub::OutboundMessagePtr> &fromHistory);
    // config.postgres_changes_options.wait with bindings and a database.
    bool waitsForChanges(const JoinRequest &request) const;
    void
    completeWhenChangesLive(SocketState &socket, ClientLink &link,
                            const std::shared_ptr<const JoinRequest> &request,
                            const std::shared_ptr<const cdc::CdcService::ChannelAccess> &access);
    // Private channel: the RLS checks (and replay) before completeJoin.
    void authorizeJoin(SocketState &socket, ClientLink &link,
                       const std::shared_ptr<const JoinRequest> &request);
    void pushReplayed(const SocketState &socket, Channel &channel,
                      const QList<cdc::StoredMessage> &messages);
    void replyJoinError(ClientLink &link, const protocol::InboundMessage &message,
                        const QString &reason) const;

    ChannelContext m_context;
};

// Next member id (unique per process): identifies a channel in hubs and presence.
quint64 nextMemberId();

// The presence limit (max_presence_events_per_second): the tenant's presence counter averages
// more than the limit. Checked at tracks and presence_state pushes.
bool exceedsPresenceLimit(const Channel &channel);
inline const QString PresenceLimitMessage = QStringLiteral("Too many presence messages per second");
// How a presence change of `channel` counts its presence_diff deliveries.
pubsub::DeliveryCounting presenceCounting(const Channel &channel);
// A request refused by one of the tenant's limits (kind: metrics::label_values).
void countLimitRejection(const ChannelContext &context, const QByteArray &tenantId,
                         const char *kind);

} // namespace rt::channels
