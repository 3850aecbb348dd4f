#include "server/channels/broadcast_handler.h"

#include "server/pubsub/local_pubsub.h"
#include "server/pubsub/outbound_message.h"

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
    context.pubsub.publish(outbound);
    replyOk();
    return ChannelService::Outcome::Continue;
}

} // namespace rt::channels
