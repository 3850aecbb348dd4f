#include "server/channels/broadcast_handler.h"

#include "server/cdc/cdc_service.h"
#include "server/channels/channel.h"
#include "server/channels/client_link.h"
#include "server/pubsub/hub.h"
#include "server/pubsub/local_pubsub.h"
#include "server/pubsub/outbound_message.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>

namespace rt::channels {

namespace {

bool isJsonObjectText(const QByteArray &json)
{
    for (const char c : json) {
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            return c == '{';
        }
    }
    return false;
}

// {"error": reason}: what realtime-js's send() resolves to when it asked to persist.
QByteArray errorResponse(const QString &reason)
{
    return QJsonDocument(QJsonObject{ { QStringLiteral("error"), reason } })
            .toJson(QJsonDocument::Compact);
}

// A kind-3 broadcast with {"persist": …} on a private channel: stored first (the persistence
// check and the row, on the tenant database), then broadcast with the row's id, and acked with
// it; refused: acked with the error and not broadcast.
void persistThenPublish(ChannelContext &context, SocketState &socket, Channel &channel,
                        const protocol::InboundMessage &message, const cdc::PersistOption &option,
                        pubsub::OutboundMessagePtr outbound)
{
    cdc::PersistRequest request;
    request.authorization =
            cdc::authorizationRequestFor(channel.claims, channel.subTopic(), socket.xHeaders);
    request.event = message.userEvent;
    request.payload = message.payload;
    request.isBinary = !message.payloadIsJson;
    request.ttlSeconds = option.ttlSeconds;
    Channel *target = &channel;
    const pubsub::PubSub *pubsub = &context.pubsub;
    QObject *receiver = &context.hub;
    QPointer<QObject> guard(channel.guard());
    context.cdc->persistBroadcast(
            socket.tenant, std::move(request),
            [target, pubsub, receiver, guard, ref = message.ref, outbound = std::move(outbound)](
                    const rt::Result<cdc::PersistOutcome, cdc::AuthorizationError> &result) {
                cdc::CdcService::reply(receiver, guard, [=] {
                    if (!result || !result->stored) {
                        const QString reason = result
                                ? cdc::persistRefusedReason(target->subTopic())
                                : QStringLiteral("UnableToPersistMessage: %1")
                                          .arg(result.error().detail);
                        if (target->broadcastAck) {
                            target->reply(ref, "error", errorResponse(reason));
                        }
                        return;
                    }
                    pubsub->publish(pubsub::OutboundMessage::userBroadcast(
                            outbound->topic(), outbound->event(), outbound->payload(),
                            outbound->payloadIsJson(), R"({"id":")" + result->id + "\"}",
                            outbound->excludedMember(), outbound->counting()));
                    if (target->broadcastAck) {
                        target->reply(ref, "ok", R"({"id":")" + result->id + "\"}");
                    }
                });
            });
}

// Whether a persist request is refused before anything is stored (the ack says why).
std::optional<QString> persistRefusal(const ChannelContext &context, const Channel &channel,
                                      const cdc::PersistOption &option)
{
    if (!channel.isPrivate()) {
        return cdc::persistOnPublicReason();
    }
    if (!option.valid) {
        return cdc::invalidPersistReason();
    }
    if (context.cdc == nullptr) {
        return QStringLiteral("UnableToPersistMessage: the tenant has no database");
    }
    return std::nullopt;
}

} // namespace

ChannelService::Outcome BroadcastHandler::handle(ChannelContext &context, SocketState &socket,
                                                 Channel &channel,
                                                 const protocol::InboundMessage &message)
{
    // Every client broadcast push counts on a public channel, even one rejected below.
    if (channel.events) {
        channel.events->add(1);
    }
    const auto replyOk = [&] {
        if (channel.broadcastAck) {
            channel.reply(message.ref, QByteArrayLiteral("ok"), QByteArrayLiteral("{}"));
        }
    };
    // Text pushes must carry the broadcast object; anything else is not a broadcast.
    if (!message.isUserBroadcast && !isJsonObjectText(message.payload)) {
        if (channel.broadcastAck) {
            channel.reply(message.ref, QByteArrayLiteral("error"), QByteArrayLiteral("{}"));
        }
        return ChannelService::Outcome::Continue;
    }
    if (message.payload.size() > socket.tenant->maxPayloadBytes()) {
        // The reply's response is a string here, as upstream sends it.
        if (channel.broadcastAck) {
            channel.reply(message.ref, QByteArrayLiteral("error"),
                          QByteArrayLiteral("\"payload_size_exceeded\""));
        }
        return ChannelService::Outcome::Continue;
    }

    if (!channel.writesBroadcast) {
        // Private channel without broadcast-write: dropped, and no reply even with ack (§4.3).
        return ChannelService::Outcome::Continue;
    }

    const quint64 excluded = channel.broadcastSelf ? 0 : channel.memberId();
    pubsub::OutboundMessagePtr outbound;
    if (message.isUserBroadcast) {
        // The client's metadata is not forwarded (upstream ignores it too).
        outbound = pubsub::OutboundMessage::userBroadcast(
                channel.key(), message.userEvent, message.payload, message.payloadIsJson,
                QByteArray(), excluded, { channel.events, true, channel.messagesOut });
    } else {
        outbound = pubsub::OutboundMessage::push(channel.key(), QByteArrayLiteral("broadcast"),
                                                 message.payload,
                                                 pubsub::Audience::BroadcastReaders, excluded,
                                                 { channel.events, true, channel.messagesOut });
    }
    const cdc::PersistOption persist = message.isUserBroadcast
            ? cdc::persistFromMetadata(message.metadata)
            : cdc::PersistOption{};
    if (persist.asked) {
        if (const std::optional<QString> refusal = persistRefusal(context, channel, persist)) {
            if (channel.broadcastAck) {
                channel.reply(message.ref, QByteArrayLiteral("error"), errorResponse(*refusal));
            }
            return ChannelService::Outcome::Continue;
        }
        persistThenPublish(context, socket, channel, message, persist, outbound);
        return ChannelService::Outcome::Continue;
    }
    context.pubsub.publish(outbound);
    replyOk();
    return ChannelService::Outcome::Continue;
}

} // namespace rt::channels
