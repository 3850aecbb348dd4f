#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QSet>

namespace rt::gateway {

class PhoenixSession;

// The open Phoenix sessions of one worker by tenant, so that a tenant change can reach exactly
// that tenant's sockets. Worker thread only; sessions add themselves when their WebSocket opens
// and remove themselves when it closes.
class TenantSessions
{
public:
    void add(const QByteArray &tenantId, PhoenixSession *session)
    {
        QSet<PhoenixSession *> &sessions = m_sessions[tenantId];
        if (!sessions.contains(session)) {
            sessions.insert(session);
            ++m_count;
        }
    }
    void remove(const QByteArray &tenantId, PhoenixSession *session)
    {
        const auto it = m_sessions.find(tenantId);
        if (it != m_sessions.end() && it->remove(session)) {
            --m_count;
            if (it->isEmpty()) {
                m_sessions.erase(it);
            }
        }
    }
    // Open sessions of every tenant.
    qsizetype count() const { return m_count; }
    // A copy: disconnecting a session may remove it while the caller iterates.
    QList<PhoenixSession *> sessionsOf(const QByteArray &tenantId) const
    {
        return m_sessions.value(tenantId).values();
    }

private:
    QHash<QByteArray, QSet<PhoenixSession *>> m_sessions;
    qsizetype m_count = 0;
};

} // namespace rt::gateway
