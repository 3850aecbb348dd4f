#pragma once

#include "dashboard/api/connection_state.h"
#include "dashboard/api/endpoint_rotation.h"
#include "dashboard/api/failover_allowlist.h"
#include "shared/api/cluster_snapshot.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QSet>
#include <QString>
#include <QTimer>
#include <QUrl>

#include <chrono>
#include <optional>

namespace rt::dashboard {

class AdminClient;
class LiveFeed;
struct ApiError;

// The dashboard's connection to the cluster: one node at a time, any node answering for all.
// It reads the node's snapshot over HTTP first (a refused token is told apart from a dead node
// there), then follows the node's live feed. The known endpoints are the operator's URL plus
// every node's client_address of the last snapshot that the FailoverAllowlist admits (same
// scheme, allowed host); when the current node dies (socket closed or failed, heartbeat
// unanswered, silence), the others are tried in turn with a growing delay (EndpointRotation)
// while the last snapshot stays available, so views keep their picture. The token only ever
// travels in the Authorization header, to admitted nodes, over TLS for https nodes.
// Owns the AdminClient, which always points at the current node. Lives on the GUI thread.
class ConnectionManager : public QObject
{
    Q_OBJECT
public:
    explicit ConnectionManager(QObject *parent = nullptr);
    ~ConnectionManager() override;

    AdminClient *adminClient() const { return m_client; }
    LiveFeed *liveFeed() const { return m_feed; }
    void setRotationPolicy(EndpointRotation::Policy policy);
    // How long the first snapshot read of a node may take before the node counts as dead.
    void setProbeTimeout(std::chrono::milliseconds timeout) { m_probeTimeout = timeout; }

    // Connects to the node at `operatorUrl` (see nodeBaseUrl(): http(s), ws(s) or host:port)
    // with `token`; `knownEndpoints` (remembered from an earlier session) are tried too if
    // that node does not answer, as far as `trust`'s allowlist admits them. false: the URL,
    // the CA file or a failover host is unusable (state Failed says why).
    bool connectTo(const QString &operatorUrl, const QByteArray &token,
                   const QList<QUrl> &knownEndpoints = {}, const NodeTrust &trust = {});
    void disconnectFromCluster();

    const ConnectionState &state() const { return m_state; }
    // Nothing can change the state by itself any more: no retry scheduled, no snapshot read in
    // flight, no live feed open (after disconnectFromCluster(), or before the first connectTo()).
    bool isIdle() const;
    QString stateText() const { return m_state.text(); }
    // The last snapshot of the cluster from any node, kept across failovers.
    const std::optional<api::ClusterSnapshot> &lastSnapshot() const { return m_lastSnapshot; }
    // The operator's node first, then the other nodes of the last snapshot.
    QList<QUrl> knownEndpoints() const { return m_rotation.endpoints(); }
    QUrl operatorBaseUrl() const { return m_operatorBase; }

Q_SIGNALS:
    void stateChanged(const rt::dashboard::ConnectionState &state);
    // Every snapshot, from the first HTTP read and then from the live feed.
    void snapshotReceived(const rt::api::ClusterSnapshot &snapshot);
    void knownEndpointsChanged(const QList<QUrl> &endpoints);
    // Something went wrong without changing the state (a snapshot that could not be read).
    void problemOccurred(const QString &text);

private:
    void dial(const QUrl &endpoint);
    void onProbeSucceeded(quint64 generation, const api::ClusterSnapshot &snapshot);
    void onProbeFailed(quint64 generation, const ApiError &error);
    void onFeedJoined();
    void onFeedLost(const QString &reason);
    void onRetryDue();
    void takeSnapshot(const api::ClusterSnapshot &snapshot);
    void failOver(const QString &reason);
    void setState(ConnectionState state);
    void fail(const QString &reason);
    QList<QUrl> admittedNodes(const api::ClusterSnapshot &snapshot);

    AdminClient *m_client; // child
    LiveFeed *m_feed; // child
    EndpointRotation m_rotation;
    QTimer m_retryTimer;
    QUrl m_operatorBase;
    FailoverAllowlist m_allowlist;
    QSet<QString> m_refusedAddresses; // logged once each
    QByteArray m_token;
    QUrl m_current; // the node dialled or connected
    std::chrono::milliseconds m_probeTimeout{ 5000 };
    quint64 m_generation = 0; // answers of an older dial are ignored
    ConnectionState m_state;
    std::optional<api::ClusterSnapshot> m_lastSnapshot;
};

} // namespace rt::dashboard
