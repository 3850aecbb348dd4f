#include "server/channels/channel_service.h"

#include "server/cdc/cdc_service.h"
#include "server/channels/access_token_handler.h"
#include "server/channels/broadcast_handler.h"
#include "server/channels/client_link.h"
#include "server/channels/history_recovery.h"
#include "server/channels/join_payload.h"
#include "server/channels/logging.h"
#include "server/channels/presence_handler.h"
#include "server/metrics/catalog.h"
#include "server/presence/presence_store.h"
#include "server/pubsub/hub.h"
#include "server/pubsub/pubsub.h"
#include "server/pubsub/sequencing_pubsub.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_rates.h"
#include "shared/core/clock.h"
#include "shared/protocol/phoenix_codec.h"

#include <QJsonDocument>
#include <QLoggingCategory>
#include <QPointer>
#include <QTimer>
#include <QUuid>

namespace rt::channels {

namespace {

std::atomic<quint64> memberCounter{ 0 };

const QByteArray RealtimePrefix = QByteArrayLiteral("realtime:");

// Counts the socket as a connected user of its tenant unless the tenant is full, counting the
// users other nodes reported. The compare-exchange keeps concurrent joins on several workers
// from overshooting the limit (nodes can, by up to what one report interval admits).
bool tryCountUser(tenants::TenantUsage &usage, int limit)
{
    const int remote = usage.remoteUsers.load(std::memory_order_relaxed);
    int current = usage.connectedUsers.load(std::memory_order_relaxed);
    do {
        if (current + remote >= limit) {
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

// What a join carries from its checks to its completion (possibly after the database answered).
struct ChannelService::JoinRequest
{
    protocol::InboundMessage message;
    JoinConfig config;
    QByteArray token;
    QJsonObject claims;
    std::optional<qint64> exp;
    tenants::TenantPtr tenant;
};

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

namespace {

// The join's own token, unless absent or a new-style `sb_` key: then the socket's token.
QByteArray joinToken(const SocketState &socket, const JoinConfig &config)
{
    if (config.accessToken && !config.accessToken->startsWith("sb_")) {
        return auth::cleanToken(*config.accessToken);
    }
    return socket.token;
}

// What the tenant database (or its absence), or the topic's history, refuses before it is even
// asked.
std::optional<QString> databaseRefusal(const JoinConfig &config, bool needsDatabase,
                                       bool keepsHistory)
{
    if (config.isPrivate && !needsDatabase) {
        // Private channels are authorised by the tenant database's RLS policies on
        // realtime.messages; a tenant without a database cannot have them.
        return QStringLiteral("UnableToConnectToProject: Realtime was unable to connect to the "
                              "project database");
    }
    if (config.replay && !config.isPrivate) {
        // Public channels replay from the topic's history, where this node keeps one.
        if (!keepsHistory) {
            return QStringLiteral(
                    "UnableToReplayMessages: Replay is not allowed for public channels");
        }
        if (auto parsed = cdc::parseReplayParams(*config.replay); !parsed) {
            return parsed.error();
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<ChannelService::JoinRefusal>
ChannelService::limitRefusal(SocketState &socket, const tenants::Tenant &tenant,
                             const JoinConfig &config)
{
    if (tenant.privateOnly && !config.isPrivate) {
        return JoinRefusal{
            QStringLiteral("PrivateOnly: This project only allows private channels"), false
        };
    }
    if (!socket.countedAsUser && socket.usage->clusterUsers() >= tenant.maxConcurrentUsers) {
        countLimitRejection(m_context, socket.tenantId, metrics::label_values::ConcurrentUsers);
        return JoinRefusal{ QStringLiteral("ConnectionRateLimitReached: Too many connected users"),
                            false };
    }
    // Every join that passes this check counts, even if it fails later (upstream).
    if (!socket.joins) {
        socket.joins = m_context.rates.joins(tenant);
    }
    if (socket.joins->isTriggered()) {
        countLimitRejection(m_context, socket.tenantId, metrics::label_values::Joins);
        return JoinRefusal{ QStringLiteral("ClientJoinRateLimitReached: Too many joins per second"),
                            true };
    }
    socket.joins->add(1);
    if (socket.channelCount >= tenant.maxChannelsPerClient) {
        countLimitRejection(m_context, socket.tenantId, metrics::label_values::ChannelsPerClient);
        return JoinRefusal{ QStringLiteral("ChannelRateLimitReached: Too many channels"), false };
    }
    return std::nullopt;
}

std::optional<ChannelService::JoinRefusal>
ChannelService::socketRefusal(const SocketState &socket, const QByteArray &subTopic) const
{
    if (subTopic.isEmpty()) {
        return JoinRefusal{ QStringLiteral("TopicNameRequired: You must provide a topic name"),
                            false };
    }
    if (m_context.shuttingDown.load()) {
        return JoinRefusal{
            QStringLiteral("RealtimeRestarting: Realtime is restarting, please standby"), false
        };
    }
    if (!m_context.tenants.find(socket.tenantId)) {
        return JoinRefusal{
            QStringLiteral("TenantNotFound: Tenant with the given ID does not exist"), true
        };
    }
    return std::nullopt;
}

ChannelService::JoinResult ChannelService::join(SocketState &socket, ClientLink &link,
                                                const protocol::InboundMessage &message)
{
    const auto refuse = [&](const JoinRefusal &refusal) {
        replyJoinError(link, message, refusal.reason);
        JoinResult refused;
        refused.closeSocket = refusal.closeSocket;
        return refused;
    };
    if (const auto refusal = socketRefusal(socket, message.topic.mid(RealtimePrefix.size()))) {
        return refuse(*refusal);
    }
    const tenants::TenantPtr tenant = m_context.tenants.find(socket.tenantId);
    socket.tenant = tenant;
    const JoinConfig config = parseJoinConfig(QJsonDocument::fromJson(message.payload).object());
    if (const auto refusal = limitRefusal(socket, *tenant, config)) {
        return refuse(*refusal);
    }
    const QByteArray token = joinToken(socket, config);
    auth::VerifyOptions options;
    options.nowSeconds = m_context.clock.epochMs() / 1000;
    options.claimValidators = m_context.settings.claimValidators;
    Result<auth::VerifiedToken, auth::JwtError> verified =
            auth::verifyToken(token, *tenant->keys, options);
    if (!verified) {
        return refuse(JoinRefusal{ verified.error().joinReason(), false });
    }
    auto request = std::make_shared<JoinRequest>(
            JoinRequest{ message, config, token, verified->claims, verified->exp, tenant });
    const bool needsDatabase = m_context.cdc != nullptr && cdc::CdcService::usesDatabase(*tenant);
    const bool keepsHistory = historySettingsOf(m_context.sequencer, socket.tenantId).enabled();
    if (const std::optional<QString> refusal =
                databaseRefusal(config, needsDatabase, keepsHistory)) {
        return refuse(JoinRefusal{ *refusal, false });
    }
    JoinResult result;
    if (!needsDatabase) {
        result.channel = admitAndComplete(socket, link, request, nullptr, result.pending);
        return result;
    }
    // Step 9 (every join of a tenant with a database): the tenant database, asynchronously.
    // The session holds the socket's other messages back until joinFinished().
    result.pending = true;
    joinThroughDatabase(socket, link, request);
    return result;
}

void ChannelService::joinThroughDatabase(SocketState &socket, ClientLink &link,
                                         const std::shared_ptr<const JoinRequest> &request)
{
    SocketState *socketState = &socket;
    ClientLink *client = &link;
    m_context.cdc->connect(
            request->tenant, &m_context.hub, QPointer<QObject>(link.context()),
            [this, socketState, client, request](const cdc::ConnectOutcome &outcome) {
                if (outcome) {
                    replyJoinError(*client, request->message, *outcome);
                    client->joinFinished(nullptr, false);
                    return;
                }
                if (request->config.isPrivate) {
                    authorizeJoin(*socketState, *client, request);
                    return;
                }
                bool deferred = false;
                std::unique_ptr<Channel> channel =
                        admitAndComplete(*socketState, *client, request, nullptr, deferred);
                if (!deferred) {
                    client->joinFinished(std::move(channel), false);
                }
            });
}

cdc::AuthorizationRequest ChannelService::authorizationRequest(const SocketState &socket,
                                                               const QByteArray &subTopic,
                                                               const QJsonObject &claims)
{
    return cdc::authorizationRequestFor(claims, subTopic, socket.xHeaders);
}

void ChannelService::authorizeJoin(SocketState &socket, ClientLink &link,
                                   const std::shared_ptr<const JoinRequest> &request)
{
    const QByteArray subTopic = request->message.topic.mid(RealtimePrefix.size());
    std::optional<std::pair<qint64, int>> replay;
    if (request->config.replay) {
        auto parsed = cdc::parseReplayParams(*request->config.replay);
        if (!parsed) {
            replyJoinError(link, request->message, parsed.error());
            link.joinFinished(nullptr, false);
            return;
        }
        replay = parsed.value();
    }
    const bool checkPresence = request->config.presenceEnabled || request->tenant->presenceEnabled;
    SocketState *socketState = &socket;
    ClientLink *client = &link;
    m_context.cdc->authorizeChannel(
            request->tenant, authorizationRequest(socket, subTopic, request->claims), checkPresence,
            replay, &m_context.hub, QPointer<QObject>(link.context()),
            [this, socketState, client, request, subTopic,
             replay](const cdc::CdcService::ChannelAccess &access) {
                const auto refuse = [&](const QString &reason) {
                    replyJoinError(*client, request->message, reason);
                    client->joinFinished(nullptr, false);
                };
                if (access.error) {
                    refuse(cdc::joinErrorReason(*access.error, subTopic));
                    return;
                }
                const bool readsBroadcast = access.permissions.broadcastRead.value_or(false);
                if (!readsBroadcast && !access.permissions.presenceRead.value_or(false)) {
                    refuse(cdc::unauthorizedReason(subTopic));
                    return;
                }
                if (replay && !readsBroadcast) {
                    refuse(cdc::unauthorizedReason(subTopic));
                    return;
                }
                if (access.replayFailed) {
                    refuse(cdc::replayFailedReason());
                    return;
                }
                bool deferred = false;
                std::unique_ptr<Channel> channel = admitAndComplete(
                        *socketState, *client, request,
                        std::make_shared<const cdc::CdcService::ChannelAccess>(access), deferred);
                if (!deferred) {
                    client->joinFinished(std::move(channel), false);
                }
            });
}

std::unique_ptr<Channel> ChannelService::admitAndComplete(
        SocketState &socket, ClientLink &link, const std::shared_ptr<const JoinRequest> &request,
        const std::shared_ptr<const cdc::CdcService::ChannelAccess> &access, bool &deferred)
{
    deferred = false;
    if (!socket.countedAsUser) {
        if (!tryCountUser(*socket.usage, request->tenant->maxConcurrentUsers)) {
            countLimitRejection(m_context, socket.tenantId, metrics::label_values::ConcurrentUsers);
            replyJoinError(link, request->message,
                           QStringLiteral("ConnectionRateLimitReached: Too many connected users"));
            return nullptr;
        }
        socket.countedAsUser = true;
    }
    // The reply waits until the other nodes send this tenant's broadcasts here: a client that
    // saw SUBSCRIBED must get what anyone sends next, from any node. Usually at once (the
    // tenant already has users here); a node's first user of a tenant waits one link round
    // trip. The socket may go away meanwhile: its close undoes the user count.
    SocketState *socketState = &socket;
    ClientLink *client = &link;
    QPointer<QObject> guard(link.context());
    const bool reachable = m_context.pubsub.awaitTenantReachable(
            socket.tenantId, &m_context.hub, [this, socketState, client, guard, request, access] {
                if (guard.isNull()) {
                    return;
                }
                bool later = false;
                std::unique_ptr<Channel> channel =
                        completeAdmitted(*socketState, *client, request, access, later);
                if (!later) {
                    client->joinFinished(std::move(channel), false);
                }
            });
    if (!reachable) {
        deferred = true;
        return nullptr;
    }
    return completeAdmitted(socket, link, request, access, deferred);
}

std::unique_ptr<Channel> ChannelService::completeAdmitted(
        SocketState &socket, ClientLink &link, const std::shared_ptr<const JoinRequest> &request,
        const std::shared_ptr<const cdc::CdcService::ChannelAccess> &access, bool &deferred)
{
    SocketState *socketState = &socket;
    ClientLink *client = &link;
    QPointer<QObject> guard(link.context());
    const bool waits = waitsForChanges(*request);
    const auto complete = [this, socketState, client, guard, request, access, waits] {
        if (guard.isNull()) {
            return;
        }
        if (waits) {
            completeWhenChangesLive(*socketState, *client, request, access);
            return;
        }
        client->joinFinished(completeJoin(*socketState, *client, *request, access.get()), false);
    };
    // In a cluster a tenant's first join waits (briefly) for its home to be known, so that
    // the first messages its clients get are numbered and can be recovered.
    if (m_context.sequencer != nullptr
        && !m_context.sequencer->awaitHome(socket.tenantId, &m_context.hub, complete, HomeWaitMs)) {
        deferred = true;
        return nullptr;
    }
    if (waits) {
        deferred = true;
        completeWhenChangesLive(socket, link, request, access);
        return nullptr;
    }
    deferred = false;
    return completeJoin(socket, link, *request, access.get());
}

namespace {

// The channel's postgres_changes bindings: the join's config, or (legacy API, no config) the
// sub-topic itself as schema[:table[:filter]] (spec §3.2, §6.7).
QJsonArray joinChanges(const JoinConfig &config, const QByteArray &subTopic)
{
    QJsonArray changes = config.postgresChanges;
    if (config.hasConfig) {
        return changes;
    }
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
    return changes;
}

int positiveOr(const std::optional<int> &value, int fallback)
{
    return value && *value > 0 ? *value : fallback;
}

} // namespace

std::unique_ptr<Channel> ChannelService::makeChannel(SocketState &socket, ClientLink &link,
                                                     const JoinRequest &request,
                                                     const QByteArray &joinRef) const
{
    const JoinConfig &config = request.config;
    const tenants::Tenant &tenant = *request.tenant;
    const QByteArray subTopic = request.message.topic.mid(RealtimePrefix.size());
    pubsub::TopicKey key(socket.tenantId, config.isPrivate, subTopic);
    auto channel =
            std::make_unique<Channel>(link, key, request.message.topic, joinRef, nextMemberId());
    channel->broadcastSelf = config.broadcastSelf;
    channel->broadcastAck = config.broadcastAck;
    channel->presenceEnabled = config.presenceEnabled || tenant.presenceEnabled;
    channel->presenceKey = config.presenceKey.isEmpty()
            ? QUuid::createUuid().toString(QUuid::WithoutBraces).toLatin1()
            : config.presenceKey;
    channel->accessToken = request.token;
    channel->claims = request.claims;
    channel->events = m_context.rates.events(tenant);
    channel->presenceEvents = m_context.rates.presenceEvents(tenant);
    channel->presenceMaxCalls = positiveOr(tenant.maxClientPresenceEventsPerWindow,
                                           m_context.settings.clientPresenceMaxCalls);
    channel->presenceWindowMs =
            positiveOr(tenant.clientPresenceWindowMs, m_context.settings.clientPresenceWindowMs);
    channel->messagesOut = m_context.metrics.messagesOut.labels({ socket.tenantId });
    channel->tokenExp = request.exp;
    channel->replicationReady = config.replicationReady;
    channel->legacyChanges = !config.hasConfig;
    channel->postgresChanges = postgresChangesWithIds(joinChanges(config, subTopic));
    return channel;
}

std::unique_ptr<Channel>
ChannelService::prepareChannel(SocketState &socket, ClientLink &link, const JoinRequest &request,
                               const cdc::CdcService::ChannelAccess *access)
{
    const protocol::InboundMessage &message = request.message;
    // V1 has no join_ref: the join's ref is the channel's join ref (spec §2.2).
    QByteArray joinRef = message.joinRef;
    if (socket.vsn == protocol::Vsn::V1 || joinRef == "null") {
        joinRef = message.ref;
    }
    std::unique_ptr<Channel> channel = makeChannel(socket, link, request, joinRef);
    if (access != nullptr) {
        channel->readsBroadcast = access->permissions.broadcastRead.value_or(false);
        channel->readsPresence = access->permissions.presenceRead.value_or(false);
        // A write check that failed (database error) denies until the next access_token.
        channel->writesBroadcast = access->permissions.broadcastWrite.value_or(false);
        channel->writesPresence = access->permissions.presenceWrite.value_or(false);
    }
    return channel;
}

std::unique_ptr<Channel> ChannelService::completeJoin(SocketState &socket, ClientLink &link,
                                                      const JoinRequest &request,
                                                      const cdc::CdcService::ChannelAccess *access)
{
    std::unique_ptr<Channel> channel = prepareChannel(socket, link, request, access);
    openChannel(socket, link, request, *channel, access, true);
    return channel;
}

void ChannelService::openChannel(SocketState &socket, ClientLink &link, const JoinRequest &request,
                                 Channel &channel, const cdc::CdcService::ChannelAccess *access,
                                 bool subscribeChanges)
{
    m_context.hub.subscribe(channel.key(), &channel, channel.memberId(), socket.vsn,
                            pubsub::MemberRights{ channel.readsBroadcast, channel.readsPresence });
    ++socket.channelCount;

    if (const std::optional<QString> home =
                remoteHistoryHome(m_context.sequencer, request.config, socket.tenantId)) {
        // The home has the history: live messages wait in the channel until it answered, so
        // that what it sends comes first and nothing comes twice.
        channel.holdLive();
        SocketState *socketState = &socket;
        ClientLink *client = &link;
        QPointer<QObject> alive(channel.guard());
        Channel *target = &channel;
        auto kept = std::make_shared<const JoinRequest>(request);
        std::shared_ptr<const cdc::CdcService::ChannelAccess> keptAccess;
        if (access != nullptr) {
            keptAccess = std::make_shared<const cdc::CdcService::ChannelAccess>(*access);
        }
        askHistoryForJoin(
                *m_context.sequencer, *home, request.config, channel.key(), &m_context.hub,
                [this, socketState, client, alive, target, kept, keptAccess,
                 subscribeChanges](pubsub::TopicHistory::Recovery recovery) {
                    if (alive.isNull()) {
                        return; // left or closed meanwhile
                    }
                    if (target->heldOverflowed()) {
                        recovery = {};
                        recovery.failure = pubsub::TopicHistory::RecoveryFailure::Unavailable;
                    }
                    QJsonObject response;
                    response.insert(QLatin1String("postgres_changes"), target->postgresChanges);
                    const std::vector<pubsub::OutboundMessagePtr> fromHistory =
                            applyRecovery(std::move(recovery), kept->config, *target, response);
                    finishOpening(*socketState, *client, *kept, *target, keptAccess.get(),
                                  subscribeChanges, response, fromHistory);
                    target->releaseHeld();
                });
        return;
    }
    QJsonObject response;
    response.insert(QLatin1String("postgres_changes"), channel.postgresChanges);
    const std::vector<pubsub::OutboundMessagePtr> fromHistory =
            readHistoryForJoin(m_context.sequencer, request.config, channel, response);
    finishOpening(socket, link, request, channel, access, subscribeChanges, response, fromHistory);
}

void ChannelService::finishOpening(SocketState &socket, ClientLink &link,
                                   const JoinRequest &request, Channel &channel,
                                   const cdc::CdcService::ChannelAccess *access,
                                   bool subscribeChanges, const QJsonObject &response,
                                   const std::vector<pubsub::OutboundMessagePtr> &fromHistory)
{
    const protocol::InboundMessage &message = request.message;
    link.sendFrame(protocol::encodeReply(socket.vsn, channel.joinRef(), message.ref, message.topic,
                                         QByteArrayLiteral("ok"),
                                         QJsonDocument(response).toJson(QJsonDocument::Compact)),
                   false);
    sendFromHistory(socket.vsn, channel, fromHistory);
    if (access != nullptr) {
        pushReplayed(socket, channel, access->replayed);
    }
    if (channel.presenceEnabled && channel.readsPresence) {
        requestPresenceState(channel);
    }
    startChanges(socket, channel, request.tenant, subscribeChanges);
}

void ChannelService::startChanges(SocketState &socket, Channel &channel,
                                  const tenants::TenantPtr &tenant, bool subscribe)
{
    const bool hasDatabase = m_context.cdc != nullptr && cdc::CdcService::usesDatabase(*tenant);
    if (!channel.postgresChanges.isEmpty() && subscribe) {
        if (hasDatabase) {
            subscribeToChanges(socket, channel);
        } else {
            // Never a silent success: the client learns that no changes will come.
            channel.pushSystem(QStringLiteral("postgres_changes"), QStringLiteral("error"),
                               QStringLiteral("Unable to subscribe to changes with given "
                                              "parameters. This tenant has no database "
                                              "configured"));
        }
    }
    if (channel.replicationReady && hasDatabase) {
        Channel *target = &channel;
        m_context.cdc->whenStreaming(
                tenant, &m_context.hub, QPointer<QObject>(channel.guard()), [target](bool ready) {
                    if (ready) {
                        target->pushSystem(QStringLiteral("system"), QStringLiteral("ok"),
                                           QStringLiteral("Replication connection established"));
                    }
                });
    }
}

void ChannelService::pushReplayed(const SocketState &socket, Channel &channel,
                                  const QList<cdc::StoredMessage> &messages)
{
    // Oldest first, right after the join reply (spec §4.7).
    for (const cdc::StoredMessage &stored : messages) {
        channel.replayedIds.insert(stored.id);
        if (stored.isBinary) {
            if (socket.vsn == protocol::Vsn::V1) {
                continue; // binary payloads do not exist for V1 clients
            }
            const QByteArray metadata = R"({"id":")" + stored.id + R"(","replayed":true})";
            const pubsub::OutboundMessagePtr message = pubsub::OutboundMessage::userBroadcast(
                    channel.key(), stored.event, stored.payload, false, metadata);
            const pubsub::OutboundMessage::Frame &frame = message->frameFor(socket.vsn);
            channel.link().sendFrame(frame.bytes, frame.isBinary);
            continue;
        }
        QJsonObject meta{ { QStringLiteral("replayed"), true },
                          { QStringLiteral("id"), QString::fromUtf8(stored.id) } };
        const QByteArray payload = "{\"payload\":" + stored.payload + ",\"event\":"
                + QJsonDocument(QJsonArray{ QString::fromUtf8(stored.event) })
                          .toJson(QJsonDocument::Compact)
                          .mid(1)
                          .chopped(1)
                + R"(,"type":"broadcast","meta":)"
                + QJsonDocument(meta).toJson(QJsonDocument::Compact) + '}';
        channel.push(QByteArrayLiteral("broadcast"), payload);
    }
}

void ChannelService::subscribeToChanges(SocketState &socket, Channel &channel,
                                        std::function<void(const cdc::SubscribeOutcome &)> done)
{
    cdc::SubscribeRequest request;
    request.memberId = channel.memberId();
    request.topic = channel.key();
    request.legacy = channel.legacyChanges;
    request.claims = channel.claims;
    for (const QJsonValue entry : std::as_const(channel.postgresChanges)) {
        QJsonObject params = entry.toObject();
        const qint64 id = static_cast<qint64>(params.value(QLatin1String("id")).toDouble());
        params.remove(QLatin1String("id"));
        request.elements.append(cdc::SubscribeRequest::Element{ id, params });
    }
    channel.subscribedToChanges = true;
    Channel *target = &channel;
    m_context.cdc->subscribe(
            socket.tenant, std::move(request), &m_context.hub, QPointer<QObject>(channel.guard()),
            [target, done = std::move(done)](const cdc::SubscribeOutcome &outcome) {
                if (done) {
                    done(outcome);
                    return;
                }
                target->pushSystem(QStringLiteral("postgres_changes"),
                                   outcome.ok ? QStringLiteral("ok") : QStringLiteral("error"),
                                   outcome.message);
            });
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
    if (channel.subscribedToChanges && m_context.cdc != nullptr) {
        m_context.cdc->unsubscribe(socket.tenantId, channel.memberId());
        channel.subscribedToChanges = false;
    }
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

bool ChannelService::waitsForChanges(const JoinRequest &request) const
{
    const QByteArray subTopic = request.message.topic.mid(RealtimePrefix.size());
    return request.config.postgresChangesWait && m_context.cdc != nullptr
            && cdc::CdcService::usesDatabase(*request.tenant)
            && !joinChanges(request.config, subTopic).isEmpty();
}

// postgres_changes_options.wait: the channel's bindings are registered with the stream first,
// and the join is answered once they are matched on the live stream, or refused at the
// timeout (upstream PR #2109: same texts, same cap). The socket's other messages wait
// meanwhile, as Phoenix's socket waits for a channel's join.
void ChannelService::completeWhenChangesLive(
        SocketState &socket, ClientLink &link, const std::shared_ptr<const JoinRequest> &request,
        const std::shared_ptr<const cdc::CdcService::ChannelAccess> &access)
{
    struct Waiting
    {
        std::unique_ptr<Channel> channel;
        bool settled = false;
    };
    auto waiting = std::make_shared<Waiting>();
    waiting->channel = prepareChannel(socket, link, *request, access.get());
    Channel *channel = waiting->channel.get();
    SocketState *socketState = &socket;
    ClientLink *client = &link;
    QPointer<QObject> alive(link.context());
    const auto settle = [this, waiting, socketState, client, alive, request,
                         access](const std::optional<QString> &failure, const QString &message) {
        if (waiting->settled) {
            return;
        }
        waiting->settled = true;
        std::unique_ptr<Channel> joined = std::move(waiting->channel);
        if (alive.isNull() || failure) {
            m_context.cdc->unsubscribe(request->tenant->externalId, joined->memberId());
            if (!alive.isNull()) {
                replyJoinError(*client, request->message, *failure);
                client->joinFinished(nullptr, false);
            }
            return;
        }
        openChannel(*socketState, *client, *request, *joined, access.get(), false);
        joined->pushSystem(QStringLiteral("postgres_changes"), QStringLiteral("ok"), message);
        client->joinFinished(std::move(joined), false);
    };
    const int timeoutMs = request->config.postgresChangesTimeoutMs;
    QTimer::singleShot(timeoutMs, &m_context.hub, [settle, timeoutMs] {
        settle(QStringLiteral("PostgresChangesSubscribeTimeout: Timed out after %1ms waiting for "
                              "the postgres_changes subscription")
                       .arg(timeoutMs),
               {});
    });
    const tenants::TenantPtr tenant = request->tenant;
    subscribeToChanges(
            socket, *channel,
            [this, settle, tenant, channel](const cdc::SubscribeOutcome &outcome) {
                if (!outcome.ok) {
                    settle(QStringLiteral("RealtimeDisabledForConfiguration: ") + outcome.message,
                           {});
                    return;
                }
                m_context.cdc->whenStreaming(tenant, &m_context.hub,
                                             QPointer<QObject>(channel->guard()),
                                             [settle, message = outcome.message](bool ready) {
                                                 if (ready) {
                                                     settle(std::nullopt, message);
                                                 }
                                             });
            });
}

} // namespace rt::channels
