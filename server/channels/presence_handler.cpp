#include "server/channels/presence_handler.h"

#include "server/metrics/catalog.h"
#include "server/presence/presence_store.h"
#include "shared/core/clock.h"

#include <QJsonDocument>

namespace rt::channels {

namespace {

using Outcome = ChannelService::Outcome;

// Upstream's per-channel limit (default 5 pushes per 30 s) counts every presence push that
// names an event, before it is handled. false: the limit was exceeded and the channel shut down.
bool countPresencePush(ChannelService &service, SocketState &socket, Channel &channel)
{
    const ChannelContext &context = service.context();
    const int maxCalls = channel.presenceMaxCalls;
    const int windowMs = channel.presenceWindowMs;
    const qint64 now = context.clock.monotonicMs();
    if (channel.presencePushes == 0 || now > channel.presenceWindowEndMs) {
        channel.presencePushes = 1;
        channel.presenceWindowEndMs = now + windowMs;
    } else if (channel.presencePushes >= maxCalls) {
        service.shutdown(socket, channel, QStringLiteral("Client presence rate limit exceeded"));
        return false;
    } else {
        ++channel.presencePushes;
    }
    return true;
}

Outcome track(ChannelService &service, SocketState &socket, Channel &channel,
              const protocol::InboundMessage &message, const QJsonValue &meta)
{
    if (!meta.isUndefined() && !meta.isObject()) {
        channel.reply(message.ref, QByteArrayLiteral("error"),
                      QByteArrayLiteral("{\"reason\":\"Presence track payload must be a map\"}"));
        return Outcome::Continue;
    }
    if (!channel.writesPresence) {
        // Private channel without presence-write (spec §7.4).
        channel.reply(message.ref, QByteArrayLiteral("error"), QByteArrayLiteral("{}"));
        return Outcome::Continue;
    }
    const QJsonObject object = meta.toObject();
    if (QJsonDocument(object).toJson(QJsonDocument::Compact).size()
        > socket.tenant->maxPayloadBytes()) {
        service.shutdown(socket, channel, QStringLiteral("Track message size exceeded"));
        return Outcome::CloseChannel;
    }
    if (exceedsPresenceLimit(channel)) {
        countLimitRejection(service.context(), socket.tenantId,
                            metrics::label_values::PresenceEvents);
        service.shutdown(socket, channel, PresenceLimitMessage);
        return Outcome::CloseChannel;
    }
    const bool turnsPresenceOn = !channel.presenceEnabled;
    channel.presenceEnabled = true;
    if (!channel.trackedMeta || *channel.trackedMeta != object) {
        if (channel.presenceEvents) {
            channel.presenceEvents->add(1);
        }
        service.context().presence.trackAsync(channel.key(), channel.memberId(),
                                              channel.presenceKey, object,
                                              presenceCounting(channel));
        channel.trackedMeta = object;
    }
    channel.reply(message.ref, QByteArrayLiteral("ok"), QByteArrayLiteral("{}"));
    if (turnsPresenceOn) {
        // The client only applies diffs after a presence_state for its current join.
        service.requestPresenceState(channel);
    }
    return Outcome::Continue;
}

Outcome untrack(presence::PresenceStore &store, Channel &channel,
                const protocol::InboundMessage &message)
{
    if (channel.trackedMeta) {
        store.untrackAsync(channel.key(), channel.memberId(), presenceCounting(channel));
        channel.trackedMeta.reset();
    }
    channel.reply(message.ref, QByteArrayLiteral("ok"), QByteArrayLiteral("{}"));
    return Outcome::Continue;
}

} // namespace

ChannelService::Outcome PresenceHandler::handle(ChannelService &service, SocketState &socket,
                                                Channel &channel,
                                                const protocol::InboundMessage &message)
{
    const QJsonObject payload = QJsonDocument::fromJson(message.payload).object();
    const QJsonValue event = payload.value(QLatin1String("event"));
    if (!event.isString()) {
        // No event: nothing to do, but the client waits for an answer.
        channel.reply(message.ref, QByteArrayLiteral("ok"), QByteArrayLiteral("{}"));
        return Outcome::Continue;
    }
    if (!countPresencePush(service, socket, channel)) {
        return Outcome::CloseChannel;
    }
    const QString name = event.toString().toLower();
    if (name == QLatin1String("track")) {
        return track(service, socket, channel, message, payload.value(QLatin1String("payload")));
    }
    if (name == QLatin1String("untrack")) {
        return untrack(service.context().presence, channel, message);
    }
    channel.reply(message.ref, QByteArrayLiteral("error"), QByteArrayLiteral("{}"));
    return Outcome::Continue;
}

} // namespace rt::channels
