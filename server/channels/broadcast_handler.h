#pragma once

#include "server/channels/channel_service.h"

namespace rt::channels {

// A client broadcast on a joined channel (spec §4.1-4.3): text pushes are forwarded as sent,
// kind-3 binary pushes as user broadcasts (kind 4 to V2, JSON to V1); self and ack as joined;
// oversized payloads are refused ("payload_size_exceeded" with ack, silently without).
struct BroadcastHandler
{
    static ChannelService::Outcome handle(ChannelContext &context, SocketState &socket,
                                          Channel &channel,
                                          const protocol::InboundMessage &message);
};

} // namespace rt::channels
