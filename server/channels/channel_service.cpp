#include "server/channels/channel_service.h"

#include "server/channels/access_token_handler.h"
#include "server/channels/broadcast_handler.h"
#include "server/channels/client_link.h"
#include "server/channels/join_payload.h"
#include "server/channels/logging.h"
#include "server/channels/presence_handler.h"
#include "server/metrics/catalog.h"
#include "server/presence/presence_store.h"
#include "server/pubsub/hub.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_rates.h"
#include "shared/core/clock.h"
#include "shared/protocol/phoenix_codec.h"

#include <QJsonDocument>
#include <QLoggingCategory>
#include <QUuid>

namespace rt::channels {

namespace {

std::atomic<quint64> memberCounter{ 0 };

const QByteArray RealtimePrefix = QByteArrayLiteral("realtime:");

// Counts the socket as a connected user of its tenant unless the tenant is full. The
// compare-exchange keeps concurrent joins on several workers from overshooting the limit.
bool tryCountUser(tenants::TenantUsage &usage, int limit)
{
    int current = usage.connectedUsers.load(std::memory_order_relaxed);
    do {
        if (current >= limit) {
            return false;
        }
    } while (!usage.connectedUsers.compare_exchange_weak(current, current + 1,
                                                         std::memory_order_relaxed));
    return true;
}

} // namespace

quint64 nextMemberId()
{
    return ++memberCounter;
}

ChannelService::ChannelService(ChannelContext context) : m_context(std::move(context)) { }

void ChannelService::replyJoinError(ClientLink &link, const protocol::InboundMessage &message,
                                    const QString &reason) const
{
    qCInfo(lcChannels) << "join refused:" << message.topic << reason;
    QJsonObject response;
    response.insert(QLatin1String("reason"), reason);
    // Replies carry the join's own refs; the client matches them to its pending join push.
    const QByteArray frame = protocol::encodeReply(
            link.vsn(), message.joinRef, message.ref, message.topic, QByteArrayLiteral("error"),
            QJsonDocument(response).toJson(QJsonDocument::Compact));
    // Upstream delays every join error (CHANNEL_ERROR_BACKOFF_MS) so that misbehaving clients
    // cannot spin on rejoins.
    link.sendLater(m_context.settings.channelErrorBackoffMs, frame);
}

ChannelService::JoinResult ChannelService::join(SocketState &socket, ClientLink &link,
                                                const protocol::InboundMessage &message)
{
    JoinResult result;
    const QByteArray subTopic = message.topic.mid(RealtimePrefix.size());
    if (subTopic.isEmpty()) {
        replyJoinError(link, message,
                       QStringLiteral("TopicNameRequired: You must provide a topic name"));
        return result;
    }
    if (m_context.shuttingDown.load()) {
        replyJoinError(
                link, message,
                QStringLiteral("RealtimeRestarting: Realtime is restarting, please standby"));
        return result;
    }
    const tenants::TenantPtr tenant = m_context.tenants.find(socket.tenantId);
    if (!tenant) {
        replyJoinError(link, message,
                       QStringLiteral("TenantNotFound: Tenant with the given ID does not exist"));
        result.closeSocket = true;
        return result;
    }
    socket.tenant = tenant;

    const QJsonObject payload = QJsonDocument::fromJson(message.payload).object();
    const JoinConfig config = parseJoinConfig(payload);

    if (tenant->privateOnly && !config.isPrivate) {
        replyJoinError(link, message,
                       QStringLiteral("PrivateOnly: This project only allows private channels"));
        return result;
    }
    if (!socket.countedAsUser
        && socket.usage->connectedUsers.load() >= tenant->maxConcurrentUsers) {
        countLimitRejection(m_context, socket.tenantId, metrics::label_values::ConcurrentUsers);
        replyJoinError(link, message,
                       QStringLiteral("ConnectionRateLimitReached: Too many connected users"));
        return result;
    }
    // Every join that passes this check counts, even if it fails later (upstream).
    if (!socket.joins) {
        socket.joins = m_context.rates.joins(*tenant);
    }
    if (socket.joins->isTriggered()) {
        countLimitRejection(m_context, socket.tenantId, metrics::label_values::Joins);
        replyJoinError(link, message,
                       QStringLiteral("ClientJoinRateLimitReached: Too many joins per second"));
        result.closeSocket = true;
        return result;
    }
    socket.joins->add(1);
    if (socket.channelCount >= tenant->maxChannelsPerClient) {
        countLimitRejection(m_context, socket.tenantId, metrics::label_values::ChannelsPerClient);
        replyJoinError(link, message, QStringLiteral("ChannelRateLimitReached: Too many channels"));
        return result;
    }

    // The join's own token, unless absent or a new-style `sb_` key: then the socket's token.
    QByteArray token = socket.token;
    if (config.accessToken && !config.accessToken->startsWith("sb_")) {
        token = auth::cleanToken(*config.accessToken);
    }
    auth::VerifyOptions options;
    options.nowSeconds = m_context.clock.epochMs() / 1000;
    options.claimValidators = m_context.settings.claimValidators;
    Result<auth::VerifiedToken, auth::JwtError> verified =
            auth::verifyToken(token, *tenant->keys, options);
    if (!verified) {
        replyJoinError(link, message, verified.error().joinReason());
        return result;
    }

    if (config.isPrivate) {
        // Private channels are authorised by the tenant database's RLS policies on
        // realtime.messages; without that check nobody may join one.
        // TODO(qtrealtime): RLS authorisation of private channels #4
        replyJoinError(link, message,
                       QStringLiteral("UnableToConnectToProject: Realtime was unable to connect "
                                      "to the project database"));
        return result;
    }
    if (config.replay) {
        replyJoinError(link, message,
                       QStringLiteral("UnableToReplayMessages: Replay is not allowed for public "
                                      "channels"));
        return result;
    }

    if (!socket.countedAsUser) {
        if (!tryCountUser(*socket.usage, tenant->maxConcurrentUsers)) {
            countLimitRejection(m_context, socket.tenantId, metrics::label_values::ConcurrentUsers);
            replyJoinError(link, message,
                           QStringLiteral("ConnectionRateLimitReached: Too many connected users"));
            return result;
        }
        socket.countedAsUser = true;
    }

    // V1 has no join_ref: the join's ref is the channel's join ref (spec §2.2).
    QByteArray joinRef = message.joinRef;
    if (socket.vsn == protocol::Vsn::V1 || joinRef == "null") {
        joinRef = message.ref;
    }
    pubsub::TopicKey key(socket.tenantId, config.isPrivate, subTopic);
    auto channel = std::make_unique<Channel>(link, key, message.topic, joinRef, nextMemberId());
    channel->broadcastSelf = config.broadcastSelf;
    channel->broadcastAck = config.broadcastAck;
    channel->presenceEnabled = config.presenceEnabled || tenant->presenceEnabled;
    channel->presenceKey = config.presenceKey.isEmpty()
            ? QUuid::createUuid().toString(QUuid::WithoutBraces).toLatin1()
            : config.presenceKey;
    channel->accessToken = token;
    channel->claims = verified->claims;
    channel->events = m_context.rates.events(*tenant);
    channel->presenceEvents = m_context.rates.presenceEvents(*tenant);
    const auto positiveOr = [](const std::optional<int> &value, int fallback) {
        return value && *value > 0 ? *value : fallback;
    };
    channel->presenceMaxCalls = positiveOr(tenant->maxClientPresenceEventsPerWindow,
                                           m_context.settings.clientPresenceMaxCalls);
    channel->presenceWindowMs =
            positiveOr(tenant->clientPresenceWindowMs, m_context.settings.clientPresenceWindowMs);
    channel->messagesOut = m_context.metrics.messagesOut.labels({ socket.tenantId });
    channel->tokenExp = verified->exp;

    QJsonArray changes = config.postgresChanges;
    if (!config.hasConfig) {
        // Legacy API: the sub-topic itself is schema[:table[:filter]] (spec §3.2, §6.7).
        QJsonObject legacy;
        const QList<QByteArray> parts = subTopic.split(':');
        legacy.insert(QLatin1String("schema"), QString::fromUtf8(parts.value(0)));
        if (parts.size() > 1) {
            legacy.insert(QLatin1String("table"), QString::fromUtf8(parts.value(1)));
        }
        if (parts.size() > 2) {
            legacy.insert(QLatin1String("filter"),
                          QString::fromUtf8(subTopic.mid(parts[0].size() + parts[1].size() + 2)));
        }
        changes.append(legacy);
    }
    channel->postgresChanges = postgresChangesWithIds(changes);

    m_context.hub.subscribe(key, channel.get(), channel->memberId(), socket.vsn,
                            pubsub::MemberRights{});
    ++socket.channelCount;

    QJsonObject response;
    response.insert(QLatin1String("postgres_changes"), channel->postgresChanges);
    link.sendFrame(protocol::encodeReply(socket.vsn, joinRef, message.ref, message.topic,
                                         QByteArrayLiteral("ok"),
                                         QJsonDocument(response).toJson(QJsonDocument::Compact)),
                   false);
    if (channel->presenceEnabled) {
        requestPresenceState(*channel);
    }
    if (!changes.isEmpty()) {
        // Never a silent success: the client learns that no changes will come.
        // TODO(qtrealtime): postgres_changes over logical replication #4
        channel->pushSystem(QStringLiteral("postgres_changes"), QStringLiteral("error"),
                            tenant->hasDatabase()
                                    ? QStringLiteral("Unable to subscribe to changes with given "
                                                     "parameters. postgres_changes is not "
                                                     "available on this server yet")
                                    : QStringLiteral("Unable to subscribe to changes with given "
                                                     "parameters. This tenant has no database "
                                                     "configured"));
    }
    result.channel = std::move(channel);
    return result;
}

ChannelService::Outcome ChannelService::handleEvent(SocketState &socket, Channel &channel,
                                                    const protocol::InboundMessage &message)
{
    if (message.event == "broadcast") {
        return BroadcastHandler::handle(m_context, socket, channel, message);
    }
    if (message.event == "presence") {
        return PresenceHandler::handle(*this, socket, channel, message);
    }
    if (message.event == "access_token") {
        return AccessTokenHandler::handle(*this, socket, channel, message);
    }
    // Upstream counts and logs unknown events without replying (spec §3.7).
    if (channel.events) {
        channel.events->add(1);
    }
    qCDebug(lcChannels) << "ignoring event" << message.event << "on" << message.topic;
    return Outcome::Continue;
}

void ChannelService::shutdown(SocketState &socket, Channel &channel, const QString &message)
{
    qCInfo(lcChannels) << "channel shutdown:" << channel.topic() << message;
    channel.pushSystem(QStringLiteral("system"), QStringLiteral("error"), message);
    channel.pushClose();
    release(socket, channel);
}

void ChannelService::release(SocketState &socket, Channel &channel)
{
    m_context.hub.unsubscribe(channel.key(), &channel);
    if (channel.trackedMeta) {
        m_context.presence.untrackAsync(channel.key(), channel.memberId(),
                                        presenceCounting(channel));
        channel.trackedMeta.reset();
    }
    --socket.channelCount;
}

void ChannelService::releaseSocket(SocketState &socket)
{
    if (socket.countedAsUser) {
        socket.countedAsUser = false;
        socket.usage->connectedUsers.fetch_sub(1, std::memory_order_relaxed);
    }
}

ChannelService::Outcome ChannelService::tick(SocketState &socket, Channel &channel,
                                             qint64 nowSeconds)
{
    if (channel.tokenExp && *channel.tokenExp <= nowSeconds) {
        shutdown(socket, channel,
                 QStringLiteral("Token has expired %1 seconds ago")
                         .arg(nowSeconds - *channel.tokenExp));
        return Outcome::CloseChannel;
    }
    return Outcome::Continue;
}

void ChannelService::requestPresenceState(Channel &channel)
{
    channel.awaitingPresenceState = true;
    Channel *target = &channel;
    // The answer comes back through this worker's hub (alive as long as the worker) and runs
    // only if the channel still exists then: its guard dies with it.
    m_context.presence.requestStateAsync(
            channel.key(), &m_context.hub, QPointer<QObject>(channel.guard()),
            [target](const QByteArray &state) {
                target->awaitingPresenceState = false;
                if (exceedsPresenceLimit(*target)) {
                    target->shutdownRequested = true;
                    target->link().shutDownChannelLater(target->memberId(), PresenceLimitMessage,
                                                        metrics::label_values::PresenceEvents);
                    return;
                }
                if (target->presenceEvents) {
                    target->presenceEvents->add(1);
                }
                target->push(QByteArrayLiteral("presence_state"), state);
            });
}

bool exceedsPresenceLimit(const Channel &channel)
{
    // Upstream compares the windowed average, strictly, with the limit (not the triggered flag).
    return channel.presenceEvents && channel.presenceEvents->options().limit
            && channel.presenceEvents->average() > channel.presenceEvents->options().limit->value;
}

pubsub::DeliveryCounting presenceCounting(const Channel &channel)
{
    return pubsub::DeliveryCounting{ channel.presenceEvents, false, channel.messagesOut };
}

void countLimitRejection(const ChannelContext &context, const QByteArray &tenantId,
                         const char *kind)
{
    context.metrics.rateLimitRejections.labels({ tenantId, QByteArrayView(kind) })->inc();
}

} // namespace rt::channels
