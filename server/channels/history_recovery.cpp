#include "server/channels/history_recovery.h"

#include "server/cdc/channel_authorization.h"
#include "server/channels/channel.h"
#include "server/channels/client_link.h"
#include "server/pubsub/sequencing_pubsub.h"

namespace rt::channels {

namespace {

void notRecovered(QJsonObject &response, const QString &reason)
{
    response.insert(QLatin1String("recovered"), false);
    response.insert(QLatin1String("reason"), reason);
}

std::vector<pubsub::OutboundMessagePtr> recover(pubsub::TopicHistory &history,
                                                const pubsub::HistorySettings &settings,
                                                const JoinConfig::Recover &from, Channel &channel,
                                                QJsonObject &response)
{
    pubsub::TopicHistory::Recovery recovery = history.since(
            channel.key(), pubsub::StreamPosition{ from.epoch, from.offset }, settings);
    channel.deliveredUpTo = recovery.top;
    if (!from.valid) {
        notRecovered(response, QStringLiteral("invalid position"));
        return {};
    }
    if (recovery.failure != pubsub::TopicHistory::RecoveryFailure::None) {
        notRecovered(response, pubsub::TopicHistory::toString(recovery.failure));
        return {};
    }
    response.insert(QLatin1String("recovered"), true);
    return std::move(recovery.messages);
}

} // namespace

pubsub::HistorySettings historySettingsOf(const pubsub::SequencingPubSub *sequencer,
                                          const QByteArray &tenantId)
{
    return sequencer != nullptr ? sequencer->settingsFor(tenantId)
                                : pubsub::HistorySettings{ 0, 0 };
}

bool readsHistory(const JoinConfig &config)
{
    return config.recover || (config.replay && !config.isPrivate);
}

std::vector<pubsub::OutboundMessagePtr>
readHistoryForJoin(const pubsub::SequencingPubSub *sequencer, const JoinConfig &config,
                   Channel &channel, QJsonObject &response)
{
    if (!readsHistory(config)) {
        return {};
    }
    const pubsub::HistorySettings settings = historySettingsOf(sequencer, channel.key().tenant());
    if (!settings.enabled()) {
        // Only recover gets here: a public replay without history was refused before.
        notRecovered(response, QStringLiteral("history disabled"));
        return {};
    }
    pubsub::TopicHistory &history = sequencer->history();
    if (config.recover) {
        return recover(history, settings, *config.recover, channel, response);
    }
    // Validated when the join was checked.
    const auto [sinceMs, limit] = cdc::parseReplayParams(*config.replay).value();
    pubsub::TopicHistory::Recovery replay = history.sinceTime(channel.key(), sinceMs, settings);
    channel.deliveredUpTo = replay.top;
    std::vector<pubsub::OutboundMessagePtr> &messages = replay.messages;
    if (std::ssize(messages) > limit) {
        messages.erase(messages.begin(), messages.end() - limit); // the newest `limit`
    }
    return std::move(messages);
}

void sendFromHistory(protocol::Vsn vsn, Channel &channel,
                     const std::vector<pubsub::OutboundMessagePtr> &messages)
{
    if (!channel.readsBroadcast) {
        return;
    }
    for (const pubsub::OutboundMessagePtr &message : messages) {
        // postgres_changes address the members of their time, never a channel that joins later.
        if (message->audience() != pubsub::Audience::BroadcastReaders) {
            continue;
        }
        const pubsub::OutboundMessage::Frame &frame = message->frameFor(vsn);
        if (!frame.wire.isEmpty()) {
            channel.link().sendEncodedFrame(frame.wire, message->counting().ledger);
        }
    }
}

} // namespace rt::channels
