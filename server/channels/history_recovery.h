#pragma once

#include "server/channels/join_payload.h"
#include "server/pubsub/outbound_message.h"
#include "server/pubsub/topic_history.h"

#include <QJsonObject>
#include <QString>

#include <functional>
#include <optional>
#include <vector>

class QObject;

namespace rt::pubsub {
class SequencingPubSub;
}

namespace rt::channels {

class Channel;

// A join's questions to its topic's history (docs/design-notes.md, "Positions, history and
// recovery"): broadcast.recover {epoch, offset}, and broadcast.replay {since, limit} on a public
// channel. Runs on the channel's worker after the hub subscription, so nothing numbered after
// the read is missed and the channel's deliveredUpTo drops the live copies of what was read.
// On the tenant's home the history is read at once; on another node the home is asked, and the
// channel holds live messages back until the answer (Channel::holdLive).

// The tenant's history settings on this node (off without a sequencer).
pubsub::HistorySettings historySettingsOf(const pubsub::SequencingPubSub *sequencer,
                                          const QByteArray &tenantId);

// Whether the join reads the history (recover, or replay on a public channel).
bool readsHistory(const JoinConfig &config);

// The other node to ask, when the join reads the history and its tenant's home is elsewhere.
std::optional<QString> remoteHistoryHome(const pubsub::SequencingPubSub *sequencer,
                                         const JoinConfig &config, const QByteArray &tenantId);

// Answers the join's question in `response` ("recovered": true, or false with "reason") and
// returns what to send after the reply, oldest first. Sets channel.deliveredUpTo.
std::vector<pubsub::OutboundMessagePtr>
readHistoryForJoin(const pubsub::SequencingPubSub *sequencer, const JoinConfig &config,
                   Channel &channel, QJsonObject &response);

// The same question to the home `home`: `answered` runs on `receiver`'s thread with the
// home's answer, for applyRecovery (the caller checks that its channel still exists).
using HistoryAnswered = std::function<void(pubsub::TopicHistory::Recovery)>;
void askHistoryForJoin(const pubsub::SequencingPubSub &sequencer, const QString &home,
                       const JoinConfig &config, const pubsub::TopicKey &topic, QObject *receiver,
                       HistoryAnswered answered);
// What an answer (local or the home's) means for the channel: as readHistoryForJoin.
std::vector<pubsub::OutboundMessagePtr> applyRecovery(pubsub::TopicHistory::Recovery recovery,
                                                      const JoinConfig &config, Channel &channel,
                                                      QJsonObject &response);

// Queues the messages read for `channel` (the broadcasts it may read, in order).
void sendFromHistory(protocol::Vsn vsn, Channel &channel,
                     const std::vector<pubsub::OutboundMessagePtr> &messages);

} // namespace rt::channels
