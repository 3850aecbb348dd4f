#pragma once

#include "server/limits/rate_counter.h"
#include "server/metrics/counter.h"
#include "server/pubsub/hub.h"
#include "server/pubsub/topic_key.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QSet>

#include <memory>
#include <optional>
#include <vector>

namespace rt::channels {

class ClientLink;

// One joined channel of a client socket: its settings from the join, its token, and its
// presence. It is the pubsub Subscriber through which fan-out reaches the socket.
// Owned by the gateway session (one per joined topic); lives on the socket's worker thread.
class Channel final : public pubsub::Subscriber
{
public:
    Channel(ClientLink &link, pubsub::TopicKey key, QByteArray topic, QByteArray joinRef,
            quint64 memberId);

    ClientLink &link() const { return m_link; }
    const pubsub::TopicKey &key() const { return m_key; }
    const QByteArray &topic() const { return m_topic; } // "realtime:<sub-topic>"
    const QByteArray &subTopic() const { return m_key.subTopic(); }
    const QByteArray &joinRef() const { return m_joinRef; } // raw JSON token
    quint64 memberId() const { return m_memberId; }

    bool isPrivate() const { return m_key.isPrivate(); }
    bool broadcastSelf = false;
    bool broadcastAck = false;
    bool presenceEnabled = false;
    QByteArray presenceKey;
    QJsonArray postgresChanges; // with ids, as echoed in the join reply
    bool legacyChanges = false; // joined without `config`: legacy postgres_changes (spec §6.7)
    bool subscribedToChanges = false; // bindings were sent to the tenant database
    bool replicationReady = false; // broadcast.replication_ready asked at join
    // Private channels (spec §7.4): what the tenant's RLS policies allow, as of the last check
    // (join or access_token). Public channels may do everything.
    bool readsBroadcast = true;
    bool readsPresence = true;
    bool writesBroadcast = true;
    bool writesPresence = true;
    // Ids of messages delivered by replay: not delivered a second time live (spec §4.7).
    QSet<QByteArray> replayedIds;
    // The topic's position when the join read its history (recovery, replay from the history):
    // messages up to it were sent by the join or are older than what it asked for, so live
    // copies of them (posted before the join, delivered after) are dropped.
    pubsub::StreamPosition deliveredUpTo;

    QByteArray accessToken; // the channel's token (join access_token, or the socket's)
    QJsonObject claims;
    std::optional<qint64> tokenExp; // seconds since the epoch

    // Presence: the meta tracked by this channel (empty when untracked).
    std::optional<QJsonObject> trackedMeta;
    // True from the moment presence_state was requested until it was sent; presence diffs that
    // arrive meanwhile are already contained in the snapshot and are dropped (see PresenceStore).
    bool awaitingPresenceState = false;
    // The client presence limit's window: pushes counted since windowEndMs - window started.
    int presencePushes = 0;
    qint64 presenceWindowEndMs = 0;
    // The window's size, fixed at join (upstream): the tenant's values when > 0, else the
    // CLIENT_PRESENCE_* defaults.
    int presenceMaxCalls = 5;
    int presenceWindowMs = 30'000;

    // The tenant's counters this channel adds to (limits::RateCounter, shared node-wide).
    std::shared_ptr<limits::RateCounter> events;
    std::shared_ptr<limits::RateCounter> presenceEvents;
    // The tenant's messages-out metric (copies delivered by fan-out to the tenant's sockets).
    std::shared_ptr<metrics::Counter> messagesOut;
    bool shutdownRequested = false; // shutDownChannelLater() was called

    // Pushes a channel message [join_ref, null, topic, event, payload].
    void push(const QByteArray &event, const QByteArray &payloadJson) const;
    // Replies to a message of this channel: [join_ref, ref, topic, "phx_reply", {...}].
    void reply(const QByteArray &refJson, const QByteArray &status,
               const QByteArray &responseJson) const;
    // system message {extension, status, message, channel}.
    void pushSystem(const QString &extension, const QString &status, const QString &message) const;
    // phx_close with join_ref = ref = the channel's join ref.
    void pushClose() const;

    void deliver(const pubsub::OutboundMessage &message,
                 const pubsub::OutboundMessage::Frame &frame) override;

    // While the join's history question is with another node (the tenant's home), live
    // messages wait here instead of going out: at most MaxHeldMessages / MaxHeldBytes, beyond
    // which they are dropped and heldOverflowed() says so (the join then answers
    // recovered: false). releaseHeld() sends what waits, without what deliveredUpTo covers.
    static constexpr qsizetype MaxHeldMessages = 10'000;
    static constexpr qint64 MaxHeldBytes = 16LL * 1024 * 1024;
    void holdLive() { m_holding = true; }
    bool heldOverflowed() const { return m_heldOverflowed; }
    void releaseHeld();

    // A QObject that dies with this channel, on its thread: the context of callbacks from other
    // threads that must not run after a leave (created on first use).
    QObject *guard();

private:
    struct Held
    {
        pubsub::StreamPosition position;
        QByteArray wire;
        FlowLedgerPtr ledger;
    };
    bool isCoveredByJoin(const pubsub::OutboundMessage &message) const;
    void hold(const pubsub::OutboundMessage &message, const pubsub::OutboundMessage::Frame &frame);

    std::unique_ptr<QObject> m_guard;
    bool m_holding = false;
    bool m_heldOverflowed = false;
    std::vector<Held> m_held;
    qint64 m_heldBytes = 0;
    ClientLink &m_link;
    pubsub::TopicKey m_key;
    QByteArray m_topic;
    QByteArray m_joinRef;
    quint64 m_memberId;
};

} // namespace rt::channels
