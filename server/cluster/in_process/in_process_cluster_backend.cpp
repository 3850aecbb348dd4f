#include "server/cluster/in_process/in_process_cluster.h"
#include "server/cluster/logging.h"

#include <QMetaObject>

namespace rt::cluster {

InProcessClusterBackend::InProcessClusterBackend(InProcessCluster &cluster, QObject *parent)
    : ClusterBackend(parent),
      m_cluster(&cluster)
{ }

InProcessClusterBackend::~InProcessClusterBackend()
{
    // Going away without stop() is a leave too: a destroyed view can renew nothing.
    if (m_registered && m_cluster) {
        m_cluster->unregisterNode(m_self.id);
    }
}

void InProcessClusterBackend::post(std::function<void()> call)
{
    QMetaObject::invokeMethod(this, std::move(call), Qt::QueuedConnection);
}

void InProcessClusterBackend::start(const NodeInfo &self)
{
    Q_ASSERT(!m_started);
    m_started = true;
    m_self = self;
    if (!m_cluster || !m_cluster->registerNode(this, self)) {
        const QString reason =
                QStringLiteral("node id %1 is empty or already registered").arg(self.id);
        qCWarning(lcCluster).noquote() << "in-process cluster:" << reason;
        post([this, reason] { Q_EMIT backendUnavailable(reason); });
        return;
    }
    m_registered = true;
    // Queued after the membersChanged that registerNode() queued for this node.
    post([this] { Q_EMIT backendAvailable(); });
}

void InProcessClusterBackend::stop()
{
    if (m_registered && m_cluster) {
        m_cluster->unregisterNode(m_self.id);
    }
    m_registered = false;
    post([this] { Q_EMIT stopped(); });
}

void InProcessClusterBackend::updateSelf(const NodeInfo &self)
{
    Q_ASSERT(self.id == m_self.id);
    m_self = self;
    if (m_registered && m_cluster) {
        m_cluster->updateNode(self);
    }
}

QList<NodeInfo> InProcessClusterBackend::members() const
{
    return m_registered && m_cluster ? m_cluster->memberList() : QList<NodeInfo>();
}

void InProcessClusterBackend::claim(const QString &resource, const QByteArray &metadata)
{
    if (!m_registered || !m_cluster) {
        post([this, resource] {
            Q_EMIT claimFailed(resource, QStringLiteral("this node is not registered"));
        });
        return;
    }
    m_cluster->claim(this, resource, metadata);
}

void InProcessClusterBackend::updateClaim(const QString &resource, const QByteArray &metadata)
{
    if (!m_registered || !m_cluster) {
        post([this, resource] {
            Q_EMIT claimLost(resource, QStringLiteral("this node is not registered"));
        });
        return;
    }
    m_cluster->updateClaim(this, resource, metadata);
}

void InProcessClusterBackend::release(const QString &resource)
{
    if (m_registered && m_cluster) {
        m_cluster->release(this, resource);
    }
}

std::optional<Claim> InProcessClusterBackend::claimOf(const QString &resource) const
{
    return m_cluster ? m_cluster->claimOf(resource) : std::nullopt;
}

QStringList InProcessClusterBackend::ownedClaims() const
{
    return m_registered && m_cluster ? m_cluster->claimsOf(m_self.id) : QStringList();
}

ConfigSnapshot InProcessClusterBackend::configSnapshot() const
{
    return m_cluster ? m_cluster->snapshot() : ConfigSnapshot();
}

QHash<QString, qint64> InProcessClusterBackend::configExpiries() const
{
    return m_cluster ? m_cluster->configExpiries() : QHash<QString, qint64>();
}

void InProcessClusterBackend::putConfig(const QString &key, const QByteArray &value,
                                        qint64 expectedModRevision, int ttlSeconds,
                                        ConfigCallback done)
{
    ConfigWriteResult result = m_cluster
            ? m_cluster->putConfig(key, value, expectedModRevision, ttlSeconds)
            : ConfigWriteResult(ConfigWriteError{ ConfigWriteError::Kind::Unavailable, std::nullopt,
                                                  QStringLiteral("the cluster is gone") });
    post([done = std::move(done), result = std::move(result)]() mutable {
        if (done) {
            done(std::move(result));
        }
    });
}

void InProcessClusterBackend::deleteConfig(const QString &key, qint64 expectedModRevision,
                                           ConfigCallback done)
{
    ConfigWriteResult result = m_cluster
            ? m_cluster->deleteConfig(key, expectedModRevision)
            : ConfigWriteResult(ConfigWriteError{ ConfigWriteError::Kind::Unavailable, std::nullopt,
                                                  QStringLiteral("the cluster is gone") });
    post([done = std::move(done), result = std::move(result)]() mutable {
        if (done) {
            done(std::move(result));
        }
    });
}

void InProcessClusterBackend::suspendKeepAlive()
{
    if (m_registered && m_cluster) {
        m_cluster->suspendKeepAlive(m_self.id);
    }
}

} // namespace rt::cluster
