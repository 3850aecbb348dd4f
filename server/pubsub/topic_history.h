#pragma once

#include "server/pubsub/outbound_message.h"
#include "server/pubsub/topic_key.h"

#include <QHash>
#include <QString>

#include <array>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

namespace rt::pubsub {

// A tenant's history settings (history_size, history_ttl_seconds). size 0: no history and no
// positions.
struct HistorySettings
{
    int size = 100;
    int ttlSeconds = 120;

    bool enabled() const { return size > 0 && ttlSeconds > 0; }
};

// The sequences and bounded histories of the topics numbered on this node, thread-safe (one
// mutex per shard of topics). append() numbers a message and runs the caller's publication under
// the topic's lock, so that every hub receives a topic's messages in offset order; recovery
// questions answer from the same state. Bounds: per topic `size` messages no older than
// `ttlSeconds` (kept by append()); per node `maxBytes` of retained messages in all, kept by
// sweep() (run it every second: the oldest messages of the whole node go first) and, between
// sweeps, by append() once twice the bound is reached (the appended topic's oldest go). A topic
// with nothing retained and no message for its ttl forgets its sequence: its next message
// starts a new epoch.
class TopicHistory
{
public:
    using Clock = std::function<qint64()>; // milliseconds, monotonic enough for ttl checks

    explicit TopicHistory(qint64 maxBytes, Clock clock = {});
    TopicHistory(const TopicHistory &) = delete;
    TopicHistory &operator=(const TopicHistory &) = delete;

    // Numbers the next message of `topic`: `make` builds it with that position (in its
    // metadata), `publish` hands it to fan-out; both run under the topic's lock and must not
    // call back into this object for the same topic. Returns the message (also kept, when the
    // settings keep history).
    OutboundMessagePtr append(const TopicKey &topic, const HistorySettings &settings,
                              const std::function<OutboundMessagePtr(StreamPosition)> &make,
                              const std::function<void(const OutboundMessagePtr &)> &publish);
    // The same for several messages that share one position (one change's messages to the
    // member groups of a topic): published in the order `make` returns them; each one's `kept`
    // is what recovery returns (nullptr: nothing, only the offset counts, e.g. postgres_changes
    // addressed to the members of their time).
    struct Numbered
    {
        OutboundMessagePtr published;
        OutboundMessagePtr kept;
    };
    using MakeGroup = std::function<std::vector<Numbered>(StreamPosition)>;
    void appendGroup(const TopicKey &topic, const HistorySettings &settings, const MakeGroup &make,
                     const std::function<void(const OutboundMessagePtr &)> &publish);

    // What a client that last saw `from` missed.
    // Unavailable: the home could not be asked (cluster); Disabled: the home keeps none.
    enum class RecoveryFailure { None, EpochChanged, HistoryTooShort, Unavailable, Disabled };
    struct Recovery
    {
        RecoveryFailure failure = RecoveryFailure::None;
        // The messages kept after `from`, oldest first (empty when the recovery failed).
        std::vector<OutboundMessagePtr> messages;
        // The topic's last position now (offset 0: nothing numbered yet).
        StreamPosition top;
    };
    Recovery since(const TopicKey &topic, StreamPosition from, const HistorySettings &settings);
    // The retained messages published at or after `sinceMs` (the clock's time), oldest first,
    // and the topic's last position (failure is always None).
    Recovery sinceTime(const TopicKey &topic, qint64 sinceMs, const HistorySettings &settings);

    // Forgets what is past its ttl everywhere, and the sequences of topics idle for their ttl.
    void sweep();
    // Forgets every sequence and message of the tenant (this node is no longer its home): a
    // later message starts a new epoch.
    void forgetTenant(const QByteArray &tenantId);

    qint64 retainedBytes() const;
    qsizetype topicCount() const;
    static QString toString(RecoveryFailure failure);

private:
    struct Entry
    {
        quint64 offset = 0;
        qint64 atMs = 0;
        std::vector<OutboundMessagePtr> messages; // what recovery returns (may be none)
        qint64 bytes = 0;
    };
    struct Topic
    {
        quint64 epoch = 0;
        quint64 lastOffset = 0;
        quint64 lastSharedOffset = 0; // the last offset that went to every node (previous)
        qint64 lastAtMs = 0;
        int ttlSeconds = 0;
        std::deque<Entry> entries;
    };
    struct Shard
    {
        mutable std::mutex mutex;
        QHash<TopicKey, Topic> topics;
    };
    static constexpr size_t ShardCount = 64;

    Shard &shardOf(const TopicKey &topic);
    qint64 now() const;
    // With the shard locked: drops what the bounds no longer allow; true when nothing is left
    // of the topic (it may be forgotten).
    bool trim(Topic &topic, const HistorySettings &settings, qint64 nowMs);
    void dropOldest(Topic &topic);
    void keepNodeBound();

    qint64 m_maxBytes;
    Clock m_clock;
    std::array<Shard, ShardCount> m_shards;
    std::atomic<qint64> m_bytes{ 0 };
};

} // namespace rt::pubsub
