#pragma once

#include "server/channels/channel_service.h"

namespace rt::channels {

// presence track/untrack on a joined channel (spec §5.1): replies ok/error, tracks under the
// channel's presence key, turns presence on for a channel joined without it (and then sends
// presence_state, so the client starts applying diffs).
struct PresenceHandler
{
    static ChannelService::Outcome handle(ChannelService &service, SocketState &socket,
                                          Channel &channel,
                                          const protocol::InboundMessage &message);
};

} // namespace rt::channels
