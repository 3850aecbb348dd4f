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

// The replay's question as the history reads it: (since in ms, limit). Validated when the join
// was checked.
std::pair<qint64, int> replayParams(const JoinConfig &config)
{
    return cdc::parseReplayParams(*config.replay).value();
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

std::optional<QString> remoteHistoryHome(const pubsub::SequencingPubSub *sequencer,
                                         const JoinConfig &config, const QByteArray &tenantId)
{
    if (sequencer == nullptr || !readsHistory(config)
        || !historySettingsOf(sequencer, tenantId).enabled()
        || (config.recover && !config.recover->valid)) {
        return std::nullopt;
    }
    const pubsub::TenantHomes::Home home = sequencer->homeOf(tenantId);
    if (home.where == pubsub::TenantHomes::Where::Remote) {
        return home.node;
    }
    return std::nullopt;
}

std::vector<pubsub::OutboundMessagePtr> applyRecovery(pubsub::TopicHistory::Recovery recovery,
                                                      const JoinConfig &config, Channel &channel,
                                                      QJsonObject &response)
{
    channel.deliveredUpTo = recovery.top;
    if (config.recover) {
        if (recovery.failure != pubsub::TopicHistory::RecoveryFailure::None) {
            notRecovered(response, pubsub::TopicHistory::toString(recovery.failure));
            return {};
        }
        response.insert(QLatin1String("recovered"), true);
        return std::move(recovery.messages);
    }
    // A public replay: what is there since that time (nothing if the home could not say).
    std::vector<pubsub::OutboundMessagePtr> &messages = recovery.messages;
    const int limit = replayParams(config).second;
    if (std::ssize(messages) > limit) {
        messages.erase(messages.begin(), messages.end() - limit); // the newest `limit`
    }
    return std::move(messages);
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
    if (config.recover && !config.recover->valid) {
        notRecovered(response, QStringLiteral("invalid position"));
        return {};
    }
    pubsub::TopicHistory::Recovery recovery;
    const pubsub::TenantHomes::Where where = sequencer->homeOf(channel.key().tenant()).where;
    if (where != pubsub::TenantHomes::Where::Here) {
        // No home known, or none reachable: nobody can say what was missed.
        recovery.failure = pubsub::TopicHistory::RecoveryFailure::Unavailable;
    } else if (config.recover) {
        recovery = sequencer->history().since(
                channel.key(),
                pubsub::StreamPosition{ config.recover->epoch, config.recover->offset }, settings);
    } else {
        recovery =
                sequencer->history().sinceTime(channel.key(), replayParams(config).first, settings);
    }
    return applyRecovery(std::move(recovery), config, channel, response);
}

void askHistoryForJoin(const pubsub::SequencingPubSub &sequencer, const QString &home,
                       const JoinConfig &config, const pubsub::TopicKey &topic, QObject *receiver,
                       HistoryAnswered answered)
{
    pubsub::history_wire::Request question;
    question.topic = topic;
    if (config.recover) {
        question.mode = pubsub::history_wire::Request::Mode::Position;
        question.from = pubsub::StreamPosition{ config.recover->epoch, config.recover->offset };
    } else {
        question.mode = pubsub::history_wire::Request::Mode::Time;
        question.sinceMs = replayParams(config).first;
    }
    sequencer.askHome(home, std::move(question), receiver, std::move(answered));
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
