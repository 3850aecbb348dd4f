#include "server/channels/access_token_handler.h"

#include "server/cdc/cdc_service.h"
#include "server/channels/client_link.h"
#include "server/pubsub/hub.h"
#include "shared/core/clock.h"

#include <QJsonDocument>
#include <QPointer>

namespace rt::channels {

namespace {

// A private channel's policies are evaluated again with the new claims (spec §3.6): a read
// permission that was true and is now false, or no read permission at all, shuts the channel
// down; otherwise the new rights apply from now on.
void recheckPermissions(ChannelService &service, const SocketState &socket, Channel &channel)
{
    ChannelContext &context = service.context();
    Channel *target = &channel;
    pubsub::Hub *hub = &context.hub;
    context.cdc->authorizeChannel(
            socket.tenant,
            ChannelService::authorizationRequest(socket, channel.subTopic(), channel.claims),
            channel.presenceEnabled, std::nullopt, &context.hub, QPointer<QObject>(channel.guard()),
            [target, hub](const cdc::CdcService::ChannelAccess &access) {
                const QByteArray &topic = target->subTopic();
                const auto shutDown = [target](const QString &message) {
                    target->shutdownRequested = true;
                    target->link().shutDownChannelLater(target->memberId(), message, nullptr);
                };
                if (access.error) {
                    shutDown(cdc::refreshShutdownMessage(*access.error, topic));
                    return;
                }
                const bool readsBroadcast = access.permissions.broadcastRead.value_or(false);
                const bool readsPresence = access.permissions.presenceRead.value_or(false);
                if (!readsBroadcast && !readsPresence) {
                    shutDown(QStringLiteral("You do not have permissions to read from this "
                                            "Channel topic: ")
                             + QString::fromUtf8(topic));
                    return;
                }
                if ((target->readsBroadcast && !readsBroadcast)
                    || (target->readsPresence && target->presenceEnabled && !readsPresence)) {
                    shutDown(QStringLiteral("You no longer have permission to read from this "
                                            "Channel topic: ")
                             + QString::fromUtf8(topic));
                    return;
                }
                target->readsBroadcast = readsBroadcast;
                target->readsPresence = readsPresence;
                target->writesBroadcast = access.permissions.broadcastWrite.value_or(false);
                target->writesPresence = access.permissions.presenceWrite.value_or(false);
                hub->setRights(target->key(), target,
                               pubsub::MemberRights{ readsBroadcast, readsPresence });
            });
}

} // namespace

ChannelService::Outcome AccessTokenHandler::handle(ChannelService &service, SocketState &socket,
                                                   Channel &channel,
                                                   const protocol::InboundMessage &message)
{
    const QJsonValue value =
            QJsonDocument::fromJson(message.payload).object().value(QLatin1String("access_token"));
    if (!value.isString()) {
        return ChannelService::Outcome::Continue; // null or not a string: ignored
    }
    const QByteArray raw = value.toString().toUtf8();
    if (raw.startsWith("sb_")) {
        return ChannelService::Outcome::Continue; // API keys keep the current token
    }
    const QByteArray token = auth::cleanToken(raw);
    if (token == channel.accessToken && !token.isEmpty()) {
        return ChannelService::Outcome::Continue;
    }
    const ChannelContext &context = service.context();
    auth::VerifyOptions options;
    options.nowSeconds = context.clock.epochMs() / 1000;
    options.claimValidators = context.settings.claimValidators;
    Result<auth::VerifiedToken, auth::JwtError> verified =
            auth::verifyToken(token, *socket.tenant->keys, options);
    if (!verified) {
        service.shutdown(socket, channel, verified.error().shutdownMessage());
        return ChannelService::Outcome::CloseChannel;
    }
    channel.accessToken = token;
    channel.claims = verified->claims;
    channel.tokenExp = verified->exp;
    if (channel.isPrivate() && context.cdc != nullptr) {
        recheckPermissions(service, socket, channel);
    }
    if (channel.subscribedToChanges) {
        // The subscription rows carry the claims: re-created with the new ones (spec §6.8).
        service.subscribeToChanges(socket, channel);
    }
    return ChannelService::Outcome::Continue;
}

} // namespace rt::channels
