#include "server/channels/access_token_handler.h"

#include "shared/core/clock.h"

#include <QJsonDocument>

namespace rt::channels {

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
    return ChannelService::Outcome::Continue;
}

} // namespace rt::channels
