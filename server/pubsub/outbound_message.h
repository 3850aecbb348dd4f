#pragma once

#include "server/pubsub/topic_key.h"
#include "shared/core/flow_ledger.h"
#include "shared/protocol/phoenix_message.h"

#include <QByteArray>
#include <QString>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace rt::limits {
class RateCounter;
}
namespace rt::metrics {
class Counter;
}

namespace rt::pubsub {

// Who among a topic's members may receive a message (private channels gate broadcasts and
// presence separately, spec §7.4).
enum class Audience : quint8 {
    BroadcastReaders,
    PresenceReaders,
    Everyone,
    // Only the listed members of the topic (postgres_changes: each channel's own `ids`).
    Members,
};

// How the deliveries of a message count against its tenant's limits (upstream counts every
// delivered copy, docs/upstream/tenants-limits-metrics.md §5.2/§5.4). Set by the publisher.
struct DeliveryCounting
{
    // Each hub adds the number of copies it delivered (one atomic add per hub and message).
    std::shared_ptr<limits::RateCounter> counter;
    // A receiving channel shuts down ("Too many messages per second") while `counter` is
    // triggered: broadcasts yes, presence diffs no.
    bool shutsDownReceivers = false;
    // The tenant's messages-out metric; each hub adds the copies it delivered.
    std::shared_ptr<metrics::Counter> delivered;
    // A regulated stream (the tenant's changes): the message's bytes count against it while it
    // lives, its frames while they wait in sockets (server/cdc flow control).
    FlowLedgerPtr ledger = nullptr;
};

// Where a message stands in its topic's sequence: an epoch (drawn when numbering starts, never
// 0) and an offset counting from 1 within it (docs/design-notes.md, "Positions, history and
// recovery"). Epoch 0: not numbered.
struct StreamPosition
{
    quint64 epoch = 0;
    quint64 offset = 0;
    // The offset of the topic's previous message that went to every node holding its tenant
    // (broadcasts; not postgres_changes, which go to their members' nodes only), 0 if none: a
    // node that receives the topic from its home sees from it that nothing went missing in
    // between (RemoteSequences). A hint, not part of the position's identity.
    quint64 previous = 0;

    bool isSet() const { return epoch != 0; }
    // The epoch as the wire carries it: 16 lowercase hex digits (a JSON number would lose bits).
    QByteArray epochText() const;
    static std::optional<quint64> parseEpoch(const QString &text);

    friend bool operator==(const StreamPosition &a, const StreamPosition &b)
    {
        return a.epoch == b.epoch && a.offset == b.offset;
    }
};

// One message for every member of a topic, shared read-only by all recipients on all workers.
// The Phoenix bytes for each serializer, and the WebSocket frame around them, are encoded at
// most once, on first use, whichever
// thread asks first (std::call_once); every recipient then queues the same implicitly shared
// QByteArray, so fan-out costs no encoding per recipient.
class OutboundMessage
{
public:
    struct Frame
    {
        QByteArray bytes; // empty: nothing to send to this serializer (e.g. raw binary to V1)
        bool isBinary = false;
        // The complete WebSocket frame carrying `bytes` (text or binary opcode, FIN, unmasked):
        // what every recipient's connection queues as is.
        QByteArray wire;
    };

    // A fastlane push [null, null, topic, event, payload]: text broadcasts, presence_diff,
    // postgres_changes, "Server requested disconnect". payloadJson must be a JSON object.
    static std::shared_ptr<const OutboundMessage> push(TopicKey topic, QByteArray event,
                                                       QByteArray payloadJson, Audience audience,
                                                       quint64 excludedMember = 0,
                                                       DeliveryCounting counting = {});

    // A fastlane push for some members of the topic only (Audience::Members): postgres_changes,
    // whose payload names the matching bindings of those channels. `members` must be sorted.
    static std::shared_ptr<const OutboundMessage> pushTo(TopicKey topic, QByteArray event,
                                                         QByteArray payloadJson,
                                                         std::vector<quint64> members,
                                                         DeliveryCounting counting = {});

    // A user broadcast (kind-3 push, HTTP single-event API, database broadcast): V2 members get a
    // binary kind-4 frame, V1 members the converted JSON object, or nothing for raw payloads.
    static std::shared_ptr<const OutboundMessage>
    userBroadcast(TopicKey topic, QByteArray userEvent, QByteArray payload, bool payloadIsJson,
                  QByteArray metadataJson, quint64 excludedMember = 0,
                  DeliveryCounting counting = {});

    // The same message numbered at `position`: its `meta` (a user broadcast's metadata, the
    // "meta" object of a text broadcast's or postgres_changes push's payload) gains "epoch" and
    // "offset". Only broadcasts and postgres_changes are numbered (isSequenced()).
    static std::shared_ptr<const OutboundMessage> withPosition(const OutboundMessage &source,
                                                               StreamPosition position);
    // The same message outside its stream's flow control (no ledger), for a history: a
    // retained message must not count as undelivered for as long as it is kept. Itself when it
    // has no ledger.
    static std::shared_ptr<const OutboundMessage>
    unregulated(const std::shared_ptr<const OutboundMessage> &message);
    // A message as it arrived from another node: numbered at `position` there (its meta already
    // says so), and sent by member `senderMember` of node `senderNode` (the sender's own node
    // excludes that member, as it would have locally; member ids mean nothing elsewhere).
    static std::shared_ptr<const OutboundMessage>
    arrived(const OutboundMessage &source, StreamPosition position, const QString &selfNodeId,
            const QString &senderNode, quint64 senderMember, quint64 forwardId = 0);
    // The node and member that sent a message published here on another node's behalf (the
    // home numbering a broadcast forwarded to it), or empty: nobody's, or this node's own
    // (then excludedMember() names the sender).
    const QString &remoteSenderNode() const { return m_remoteSenderNode; }
    quint64 remoteSenderMember() const { return m_remoteSenderMember; }
    // The number the sender's node gave a broadcast it sent to the home to be numbered (0:
    // none): the home's numbered copy carries it back, so that node knows it arrived.
    quint64 forwardId() const { return m_forwardId; }

    // Whether the message belongs to its topic's sequence: user broadcasts, text broadcasts and
    // postgres_changes (not presence diffs, system pushes or legacy change events).
    bool isSequenced() const;
    StreamPosition position() const { return m_position; }

    const TopicKey &topic() const { return m_topic; }
    Audience audience() const { return m_audience; }
    // Member id that must not receive the message (a sender without broadcast.self), or 0.
    quint64 excludedMember() const { return m_excludedMember; }
    // Audience::Members: whether `memberId` is one of them.
    bool isAddressedTo(quint64 memberId) const
    {
        return std::binary_search(m_members.begin(), m_members.end(), memberId);
    }
    // Audience::Members: the addressed member ids, ascending.
    const std::vector<quint64> &members() const { return m_members; }
    bool isUserBroadcast() const { return m_isUserBroadcast; }

    // What the message was made from (what a node link must carry to rebuild it elsewhere).
    // push/pushTo: the Phoenix event; userBroadcast: the user event.
    const QByteArray &event() const { return m_event; }
    // push/pushTo: the JSON payload object; userBroadcast: the user payload (JSON or raw bytes).
    const QByteArray &payload() const { return m_payload; }
    bool payloadIsJson() const { return m_payloadIsJson; }
    // userBroadcast: the metadata JSON object, or empty.
    const QByteArray &metadata() const { return m_metadata; }

    // The "id" of a user broadcast's metadata (database broadcasts), or empty.
    QByteArray metadataId() const;

    // Size of the user payload, for payload-size accounting.
    qsizetype payloadBytes() const { return m_payload.size(); }
    // About what the message costs in memory while something keeps it (a topic's history): its
    // source bytes, one encoded frame of about their size, and the object.
    qint64 footprintBytes() const { return 2 * sourceBytes() + qint64{ sizeof(OutboundMessage) }; }

    const Frame &frameFor(protocol::Vsn vsn) const;

    OutboundMessage(const OutboundMessage &) = delete;
    OutboundMessage &operator=(const OutboundMessage &) = delete;
    OutboundMessage(OutboundMessage &&) = delete;
    OutboundMessage &operator=(OutboundMessage &&) = delete;
    ~OutboundMessage();

    const DeliveryCounting &counting() const { return m_counting; }
    // When the message was made (the start of its fan-out latency).
    std::chrono::steady_clock::time_point createdAt() const { return m_createdAt; }

private:
    OutboundMessage() = default;
    // The bytes the message holds before any frame is encoded.
    qint64 sourceBytes() const;
    // Every field of `source`, frames not yet encoded, nothing charged.
    static std::shared_ptr<OutboundMessage> copyOf(const OutboundMessage &source);
    // Charges the ledger (if any) for the source bytes; the destructor settles everything.
    static std::shared_ptr<const OutboundMessage> charged(std::shared_ptr<OutboundMessage> message);
    void encode(protocol::Vsn vsn) const;
    void encodePhoenix(protocol::Vsn vsn, Frame &frame) const;

    TopicKey m_topic;
    StreamPosition m_position;
    QByteArray m_event; // push: Phoenix event; user broadcast: user event
    QByteArray m_payload;
    QByteArray m_metadata;
    quint64 m_excludedMember = 0;
    QString m_remoteSenderNode;
    quint64 m_remoteSenderMember = 0;
    quint64 m_forwardId = 0;
    std::vector<quint64> m_members; // Audience::Members, sorted
    DeliveryCounting m_counting;
    std::chrono::steady_clock::time_point m_createdAt = std::chrono::steady_clock::now();
    Audience m_audience = Audience::BroadcastReaders;
    bool m_isUserBroadcast = false;
    bool m_payloadIsJson = true;

    // Lazily encoded frames; written once under the once_flag, read-only afterwards.
    mutable Frame m_frames[2];
    mutable std::once_flag m_encoded[2];
};

using OutboundMessagePtr = std::shared_ptr<const OutboundMessage>;

} // namespace rt::pubsub
