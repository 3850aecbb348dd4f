#pragma once

#include "server/channels/join_payload.h"
#include "server/pubsub/outbound_message.h"
#include "server/pubsub/topic_history.h"

#include <QJsonObject>

#include <vector>

namespace rt::pubsub {
class SequencingPubSub;
}

namespace rt::channels {

class Channel;

// A join's questions to its topic's history (docs/design-notes.md, "Positions, history and
// recovery"): broadcast.recover {epoch, offset}, and broadcast.replay {since, limit} on a public
// channel. Runs on the channel's worker after the hub subscription, so nothing numbered after
// the read is missed and the channel's deliveredUpTo drops the live copies of what was read.

// The tenant's history settings on this node (off without a sequencer).
pubsub::HistorySettings historySettingsOf(const pubsub::SequencingPubSub *sequencer,
                                          const QByteArray &tenantId);

// Whether the join reads the history (recover, or replay on a public channel).
bool readsHistory(const JoinConfig &config);

// Answers the join's question in `response` ("recovered": true, or false with "reason") and
// returns what to send after the reply, oldest first. Sets channel.deliveredUpTo.
std::vector<pubsub::OutboundMessagePtr>
readHistoryForJoin(const pubsub::SequencingPubSub *sequencer, const JoinConfig &config,
                   Channel &channel, QJsonObject &response);

// Queues the messages read for `channel` (the broadcasts it may read, in order).
void sendFromHistory(protocol::Vsn vsn, Channel &channel,
                     const std::vector<pubsub::OutboundMessagePtr> &messages);

} // namespace rt::channels
