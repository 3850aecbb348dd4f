#pragma once

#include <QByteArray>
#include <QHashFunctions>

namespace rt::pubsub {

// Identifies the members that share messages: one tenant, one privacy namespace, one sub-topic.
// Public "room" and private "room" are different keys, so they never see each other's
// messages (spec §3.1); tenants never share keys.
class TopicKey
{
public:
    TopicKey() = default;
    TopicKey(const QByteArray &tenant, bool isPrivate, const QByteArray &subTopic)
        : m_tenant(tenant),
          m_subTopic(subTopic),
          m_isPrivate(isPrivate)
    {
        m_key.reserve(tenant.size() + subTopic.size() + 3);
        m_key.append(tenant).append('\x1f').append(isPrivate ? 'p' : 'u').append('\x1f');
        m_key.append(subTopic);
    }

    const QByteArray &tenant() const { return m_tenant; }
    const QByteArray &subTopic() const { return m_subTopic; }
    bool isPrivate() const { return m_isPrivate; }
    // The channel topic clients joined: "realtime:<sub-topic>".
    QByteArray channelTopic() const { return QByteArrayLiteral("realtime:") + m_subTopic; }
    // A compact unique encoding, usable as a hash key.
    const QByteArray &id() const { return m_key; }

    friend bool operator==(const TopicKey &a, const TopicKey &b) { return a.m_key == b.m_key; }
    friend bool operator!=(const TopicKey &a, const TopicKey &b) { return !(a == b); }
    friend size_t qHash(const TopicKey &key, size_t seed = 0) { return qHash(key.m_key, seed); }

private:
    QByteArray m_tenant;
    QByteArray m_subTopic;
    QByteArray m_key;
    bool m_isPrivate = false;
};

} // namespace rt::pubsub
