#include "server/node/node_config_access.h"

#include "server/cluster/cluster_backend.h"

#include <QMetaObject>
#include <QMutexLocker>

namespace rt::node {

namespace {

cluster::ConfigWriteResult unavailable()
{
    cluster::ConfigWriteError error;
    error.kind = cluster::ConfigWriteError::Kind::Unavailable;
    error.message = QStringLiteral("this node has not joined the cluster (yet)");
    return error;
}

} // namespace

NodeConfigAccess::NodeConfigAccess(std::function<bool()> isAvailable)
    : m_isAvailable(std::move(isAvailable))
{ }

cluster::ConfigSnapshot NodeConfigAccess::snapshot() const
{
    const QMutexLocker lock(&m_mutex);
    return m_snapshot;
}

bool NodeConfigAccess::isAvailable() const
{
    return m_isAvailable && m_isAvailable();
}

QPointer<cluster::ClusterBackend> NodeConfigAccess::backend() const
{
    const QMutexLocker lock(&m_mutex);
    return m_backend;
}

void NodeConfigAccess::put(const QString &key, const QByteArray &value, qint64 expectedModRevision,
                           int ttlSeconds, Done done)
{
    const QPointer<cluster::ClusterBackend> target = backend();
    if (!target) {
        done(unavailable());
        return;
    }
    // The QPointer is only read on the backend's thread, where it cannot be deleted meanwhile.
    QMetaObject::invokeMethod(
            target.data(),
            [target, key, value, expectedModRevision, ttlSeconds, done = std::move(done)] {
                if (!target) {
                    done(unavailable());
                    return;
                }
                target->putConfig(key, value, expectedModRevision, ttlSeconds, done);
            },
            Qt::QueuedConnection);
}

void NodeConfigAccess::remove(const QString &key, qint64 expectedModRevision, Done done)
{
    const QPointer<cluster::ClusterBackend> target = backend();
    if (!target) {
        done(unavailable());
        return;
    }
    QMetaObject::invokeMethod(
            target.data(),
            [target, key, expectedModRevision, done = std::move(done)] {
                if (!target) {
                    done(unavailable());
                    return;
                }
                target->deleteConfig(key, expectedModRevision, done);
            },
            Qt::QueuedConnection);
}

QHash<QString, qint64> NodeConfigAccess::expiries() const
{
    const QPointer<cluster::ClusterBackend> target = backend();
    return target ? target->configExpiries() : QHash<QString, qint64>();
}

void NodeConfigAccess::setBackend(cluster::ClusterBackend *backend)
{
    const QMutexLocker lock(&m_mutex);
    m_backend = backend;
}

void NodeConfigAccess::setSnapshot(const cluster::ConfigSnapshot &snapshot)
{
    const QMutexLocker lock(&m_mutex);
    m_snapshot = snapshot;
}

} // namespace rt::node
