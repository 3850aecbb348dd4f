#include "server/pubsub/topic_history.h"

#include <QDateTime>
#include <QRandomGenerator>

#include <algorithm>
#include <limits>

namespace rt::pubsub {

namespace {

quint64 newEpoch()
{
    return QRandomGenerator::global()->generate64() | 1U; // never 0
}

} // namespace

TopicHistory::TopicHistory(qint64 maxBytes, Clock clock)
    : m_maxBytes(maxBytes),
      m_clock(std::move(clock))
{ }

qint64 TopicHistory::now() const
{
    return m_clock ? m_clock() : QDateTime::currentMSecsSinceEpoch();
}

TopicHistory::Shard &TopicHistory::shardOf(const TopicKey &topic)
{
    return m_shards[qHash(topic) % ShardCount];
}

OutboundMessagePtr
TopicHistory::append(const TopicKey &topic, const HistorySettings &settings,
                     const std::function<OutboundMessagePtr(StreamPosition)> &make,
                     const std::function<void(const OutboundMessagePtr &)> &publish)
{
    OutboundMessagePtr made;
    appendGroup(
            topic, settings,
            [&](StreamPosition position) {
                made = make(position);
                return std::vector<Numbered>{ Numbered{ made, made } };
            },
            publish);
    return made;
}

void TopicHistory::appendGroup(const TopicKey &topic, const HistorySettings &settings,
                               const MakeGroup &make,
                               const std::function<void(const OutboundMessagePtr &)> &publish)
{
    Shard &shard = shardOf(topic);
    const std::lock_guard lock(shard.mutex);
    const qint64 nowMs = now();
    Topic &state = shard.topics[topic];
    if (trim(state, settings, nowMs) && state.epoch != 0
        && nowMs - state.lastAtMs >= qint64{ state.ttlSeconds } * 1000) {
        state = Topic{}; // idle past its ttl: a new sequence
    }
    if (state.epoch == 0) {
        state.epoch = newEpoch();
    }
    const StreamPosition position{ state.epoch, ++state.lastOffset, state.lastSharedOffset };
    state.lastAtMs = nowMs;
    state.ttlSeconds = settings.ttlSeconds;
    const std::vector<Numbered> messages = make(position);
    if (std::any_of(messages.begin(), messages.end(), [](const Numbered &numbered) {
            return numbered.published->audience() != Audience::Members;
        })) {
        state.lastSharedOffset = position.offset;
    }
    if (settings.enabled()) {
        // One entry per position, so that the count bound counts events.
        std::vector<OutboundMessagePtr> kept;
        auto bytes = static_cast<qint64>(sizeof(Entry));
        for (const Numbered &numbered : messages) {
            if (numbered.kept) {
                bytes += numbered.kept->footprintBytes();
                kept.push_back(numbered.kept);
            }
        }
        state.entries.push_back(Entry{ position.offset, nowMs, std::move(kept), bytes });
        m_bytes.fetch_add(bytes, std::memory_order_relaxed);
        trim(state, settings, nowMs);
        while (m_bytes.load(std::memory_order_relaxed) > 2 * m_maxBytes
               && state.entries.size() > 1) {
            dropOldest(state);
        }
    }
    for (const Numbered &numbered : messages) {
        publish(numbered.published);
    }
}

bool TopicHistory::trim(Topic &topic, const HistorySettings &settings, qint64 nowMs)
{
    const qsizetype keep = settings.enabled() ? settings.size : 0;
    const qint64 oldestAllowed = nowMs - qint64{ settings.ttlSeconds } * 1000;
    while (!topic.entries.empty()
           && (std::ssize(topic.entries) > keep || topic.entries.front().atMs < oldestAllowed)) {
        dropOldest(topic);
    }
    return topic.entries.empty();
}

void TopicHistory::dropOldest(Topic &topic)
{
    m_bytes.fetch_sub(topic.entries.front().bytes, std::memory_order_relaxed);
    topic.entries.pop_front();
}

TopicHistory::Recovery TopicHistory::since(const TopicKey &topic, StreamPosition from,
                                           const HistorySettings &settings)
{
    Shard &shard = shardOf(topic);
    const std::lock_guard lock(shard.mutex);
    Recovery recovery;
    const auto it = shard.topics.find(topic);
    if (it == shard.topics.end() || it->epoch == 0) {
        recovery.failure = RecoveryFailure::EpochChanged; // nothing numbered: a new epoch comes
        return recovery;
    }
    Topic &state = it.value();
    trim(state, settings, now());
    recovery.top = StreamPosition{ state.epoch, state.lastOffset };
    if (from.epoch != state.epoch || from.offset > state.lastOffset) {
        recovery.failure = RecoveryFailure::EpochChanged;
        return recovery;
    }
    const quint64 firstKept =
            state.entries.empty() ? state.lastOffset + 1 : state.entries.front().offset;
    if (firstKept > from.offset + 1) {
        recovery.failure = RecoveryFailure::HistoryTooShort;
        return recovery;
    }
    for (const Entry &entry : state.entries) {
        if (entry.offset > from.offset) {
            recovery.messages.insert(recovery.messages.end(), entry.messages.begin(),
                                     entry.messages.end());
        }
    }
    return recovery;
}

TopicHistory::Recovery TopicHistory::sinceTime(const TopicKey &topic, qint64 sinceMs,
                                               const HistorySettings &settings)
{
    Shard &shard = shardOf(topic);
    const std::lock_guard lock(shard.mutex);
    Recovery recovery;
    const auto it = shard.topics.find(topic);
    if (it == shard.topics.end()) {
        return recovery;
    }
    trim(it.value(), settings, now());
    recovery.top = StreamPosition{ it->epoch, it->lastOffset };
    for (const Entry &entry : std::as_const(it->entries)) {
        if (entry.atMs >= sinceMs) {
            recovery.messages.insert(recovery.messages.end(), entry.messages.begin(),
                                     entry.messages.end());
        }
    }
    return recovery;
}

void TopicHistory::sweep()
{
    const qint64 nowMs = now();
    for (Shard &shard : m_shards) {
        const std::lock_guard lock(shard.mutex);
        shard.topics.removeIf([this, nowMs](QHash<TopicKey, Topic>::iterator it) {
            Topic &topic = it.value();
            const HistorySettings kept{ static_cast<int>(topic.entries.size()), topic.ttlSeconds };
            const bool empty = trim(topic, kept, nowMs);
            return empty && nowMs - topic.lastAtMs >= qint64{ topic.ttlSeconds } * 1000;
        });
    }
    keepNodeBound();
}

void TopicHistory::forgetTenant(const QByteArray &tenantId)
{
    for (Shard &shard : m_shards) {
        const std::lock_guard lock(shard.mutex);
        shard.topics.removeIf([this, &tenantId](QHash<TopicKey, Topic>::iterator it) {
            if (it.key().tenant() != tenantId) {
                return false;
            }
            while (!it.value().entries.empty()) {
                dropOldest(it.value());
            }
            return true;
        });
    }
}

void TopicHistory::keepNodeBound()
{
    if (m_bytes.load(std::memory_order_relaxed) <= m_maxBytes) {
        return;
    }
    // The oldest messages of the whole node go first: find the time before which everything
    // must go, then drop it topic by topic.
    std::vector<std::pair<qint64, qint64>> ages; // (published at, bytes)
    for (Shard &shard : m_shards) {
        const std::lock_guard lock(shard.mutex);
        for (const Topic &topic : std::as_const(shard.topics)) {
            for (const Entry &entry : topic.entries) {
                ages.emplace_back(entry.atMs, entry.bytes);
            }
        }
    }
    std::sort(ages.begin(), ages.end());
    qint64 excess = m_bytes.load(std::memory_order_relaxed) - m_maxBytes;
    qint64 cutoff = std::numeric_limits<qint64>::min();
    for (const auto &[atMs, bytes] : ages) {
        if (excess <= 0) {
            break;
        }
        excess -= bytes;
        cutoff = atMs;
    }
    for (Shard &shard : m_shards) {
        const std::lock_guard lock(shard.mutex);
        for (Topic &topic : shard.topics) {
            while (!topic.entries.empty() && topic.entries.front().atMs <= cutoff) {
                dropOldest(topic);
            }
        }
    }
}

qint64 TopicHistory::retainedBytes() const
{
    return m_bytes.load(std::memory_order_relaxed);
}

qsizetype TopicHistory::topicCount() const
{
    qsizetype count = 0;
    for (const Shard &shard : m_shards) {
        const std::lock_guard lock(shard.mutex);
        count += shard.topics.size();
    }
    return count;
}

QString TopicHistory::toString(RecoveryFailure failure)
{
    switch (failure) {
    case RecoveryFailure::EpochChanged:
        return QStringLiteral("epoch changed");
    case RecoveryFailure::HistoryTooShort:
        return QStringLiteral("history too short");
    case RecoveryFailure::Unavailable:
        return QStringLiteral("history unavailable");
    case RecoveryFailure::Disabled:
        return QStringLiteral("history disabled");
    case RecoveryFailure::None:
        break;
    }
    return {};
}

} // namespace rt::pubsub
