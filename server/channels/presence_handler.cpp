#include "server/channels/presence_handler.h"

#include "server/presence/presence_store.h"

#include <QJsonDocument>

namespace rt::channels {

ChannelService::Outcome PresenceHandler::handle(ChannelService &service, SocketState &socket,
                                                Channel &channel,
                                                const protocol::InboundMessage &message)
{
    const QJsonObject payload = QJsonDocument::fromJson(message.payload).object();
    const QJsonValue event = payload.value(QLatin1String("event"));
    if (!event.isString()) {
        // No event: nothing to do, but the client waits for an answer.
        channel.reply(message.ref, QByteArrayLiteral("ok"), QByteArrayLiteral("{}"));
        return ChannelService::Outcome::Continue;
    }
    const QString name = event.toString().toLower();
    presence::PresenceStore &store = service.context().presence;

    if (name == QLatin1String("track")) {
        const QJsonValue meta = payload.value(QLatin1String("payload"));
        if (!meta.isUndefined() && !meta.isObject()) {
            channel.reply(
                    message.ref, QByteArrayLiteral("error"),
                    QByteArrayLiteral("{\"reason\":\"Presence track payload must be a map\"}"));
            return ChannelService::Outcome::Continue;
        }
        const QJsonObject object = meta.toObject();
        if (QJsonDocument(object).toJson(QJsonDocument::Compact).size()
            > socket.tenant->maxPayloadBytes()) {
            service.shutdown(socket, channel, QStringLiteral("Track message size exceeded"));
            return ChannelService::Outcome::CloseChannel;
        }
        const bool turnsPresenceOn = !channel.presenceEnabled;
        channel.presenceEnabled = true;
        if (!channel.trackedMeta || *channel.trackedMeta != object) {
            store.trackAsync(channel.key(), channel.memberId(), channel.presenceKey, object);
            channel.trackedMeta = object;
        }
        channel.reply(message.ref, QByteArrayLiteral("ok"), QByteArrayLiteral("{}"));
        if (turnsPresenceOn) {
            // The client only applies diffs after a presence_state for its current join.
            service.requestPresenceState(channel);
        }
        return ChannelService::Outcome::Continue;
    }
    if (name == QLatin1String("untrack")) {
        if (channel.trackedMeta) {
            store.untrackAsync(channel.key(), channel.memberId());
            channel.trackedMeta.reset();
        }
        channel.reply(message.ref, QByteArrayLiteral("ok"), QByteArrayLiteral("{}"));
        return ChannelService::Outcome::Continue;
    }
    channel.reply(message.ref, QByteArrayLiteral("error"), QByteArrayLiteral("{}"));
    return ChannelService::Outcome::Continue;
}

} // namespace rt::channels
