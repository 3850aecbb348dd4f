#pragma once

#include "server/channels/channel_service.h"

namespace rt::channels {

// access_token refresh on a joined channel (spec §3.6): never replied to; `sb_` keys, null and
// the current token are ignored; a new token is verified and re-arms the expiry check, and a
// failing one shuts the channel down with the token's error.
struct AccessTokenHandler
{
    static ChannelService::Outcome handle(ChannelService &service, SocketState &socket,
                                          Channel &channel,
                                          const protocol::InboundMessage &message);
};

} // namespace rt::channels
