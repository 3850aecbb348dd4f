#pragma once

#include "server/cluster/types.h"
#include "server/http/cluster_config_routes.h"

#include <QMutex>
#include <QPointer>

#include <functional>

namespace rt::cluster {
class ClusterBackend;
}

namespace rt::node {

// The configuration admin API's access to this node's cluster backend. Owned by the Server
// (the routes exist before the node joins); the backend lives on the cluster thread, so writes
// are posted there, and the snapshot the node applied last is kept here for readers on any
// thread. Until a backend is attached, writes answer Unavailable.
class NodeConfigAccess final : public http::ClusterConfigAccess
{
public:
    explicit NodeConfigAccess(std::function<bool()> isAvailable);

    cluster::ConfigSnapshot snapshot() const override;
    bool isAvailable() const override;
    void put(const QString &key, const QByteArray &value, qint64 expectedModRevision,
             int ttlSeconds, Done done) override;
    void remove(const QString &key, qint64 expectedModRevision, Done done) override;

    // Cluster thread: when the temporary entries expire (ClusterBackend::configExpiries()).
    QHash<QString, qint64> expiries() const;
    // Cluster thread: the backend writes go to (nullptr: none any more).
    void setBackend(cluster::ClusterBackend *backend);
    // Any thread: the configuration the node applied.
    void setSnapshot(const cluster::ConfigSnapshot &snapshot);

private:
    QPointer<cluster::ClusterBackend> backend() const;

    std::function<bool()> m_isAvailable;
    mutable QMutex m_mutex;
    cluster::ConfigSnapshot m_snapshot; // guarded by m_mutex
    QPointer<cluster::ClusterBackend> m_backend; // guarded by m_mutex; dereferenced on its thread
};

} // namespace rt::node
