#include "dashboard/api/connection_manager.h"

#include "dashboard/api/admin_client.h"
#include "dashboard/api/endpoint.h"
#include "dashboard/api/live_feed.h"
#include "dashboard/api/node_tls.h"

#include <QLoggingCategory>

namespace rt::dashboard {

namespace {

Q_LOGGING_CATEGORY(lcConnection, "rt.dashboard.connection")

} // namespace

ConnectionManager::ConnectionManager(QObject *parent)
    : QObject(parent),
      m_client(new AdminClient(this)),
      m_feed(new LiveFeed(this)),
      m_retryTimer(this)
{
    m_retryTimer.setSingleShot(true);
    connect(&m_retryTimer, &QTimer::timeout, this, &ConnectionManager::onRetryDue);
    connect(m_feed, &LiveFeed::joined, this, &ConnectionManager::onFeedJoined);
    connect(m_feed, &LiveFeed::lost, this, &ConnectionManager::onFeedLost);
    connect(m_feed, &LiveFeed::snapshotReceived, this, &ConnectionManager::takeSnapshot);
    connect(m_feed, &LiveFeed::problemOccurred, this, &ConnectionManager::problemOccurred);
}

ConnectionManager::~ConnectionManager()
{
    ++m_generation;
}

void ConnectionManager::setRotationPolicy(EndpointRotation::Policy policy)
{
    const QList<QUrl> endpoints = m_rotation.endpoints();
    m_rotation = EndpointRotation(policy);
    m_rotation.setEndpoints(endpoints);
}

bool ConnectionManager::connectTo(const QString &operatorUrl, const QByteArray &token,
                                  const QList<QUrl> &knownEndpoints, const NodeTrust &trust)
{
    disconnectFromCluster();
    const std::optional<QUrl> base = nodeBaseUrl(operatorUrl);
    if (!base) {
        fail(tr("\"%1\" is not the URL of a node (e.g. http://host:4000).")
                     .arg(operatorUrl.trimmed()));
        return false;
    }
    Result<QSslConfiguration> ssl = nodeSslConfiguration(trust.caFile);
    if (!ssl) {
        fail(ssl.error().message);
        return false;
    }
    Result<FailoverAllowlist> allowlist = FailoverAllowlist::create(*base, trust.failoverHosts);
    if (!allowlist) {
        fail(allowlist.error().message);
        return false;
    }
    m_operatorBase = *base;
    m_allowlist = std::move(allowlist).value();
    m_refusedAddresses.clear();
    m_token = token;
    m_client->setToken(token);
    m_client->setSslConfiguration(*ssl);
    m_feed->setSslConfiguration(*ssl);
    const QList<QUrl> endpoints =
            m_allowlist.filter(mergeEndpoints(m_operatorBase, knownEndpoints));
    if (endpoints != m_rotation.endpoints()) {
        m_rotation.setEndpoints(endpoints);
        Q_EMIT knownEndpointsChanged(endpoints);
    }
    const EndpointRotation::Attempt attempt = m_rotation.start();
    ConnectionState connecting;
    connecting.kind = ConnectionState::Kind::Connecting;
    connecting.endpoint = attempt.endpoint;
    setState(connecting);
    dial(attempt.endpoint);
    return true;
}

bool ConnectionManager::isIdle() const
{
    return !m_retryTimer.isActive() && m_client->pendingRequests() == 0 && !m_feed->isOpen();
}

void ConnectionManager::disconnectFromCluster()
{
    ++m_generation;
    m_retryTimer.stop();
    m_feed->close();
    m_client->abortAll();
    m_current.clear();
    setState(ConnectionState{});
}

void ConnectionManager::dial(const QUrl &endpoint)
{
    const quint64 generation = ++m_generation;
    m_current = endpoint;
    m_feed->close();
    m_client->setBaseUrl(endpoint);
    qCInfo(lcConnection) << "dialling" << endpoint.toDisplayString();
    SnapshotReply *probe = m_client->fetchSnapshot(m_probeTimeout);
    connect(probe, &SnapshotReply::succeeded, this,
            [this, generation](const api::ClusterSnapshot &snapshot) {
                onProbeSucceeded(generation, snapshot);
            });
    connect(probe, &AdminReply::failed, this,
            [this, generation](const ApiError &error) { onProbeFailed(generation, error); });
}

void ConnectionManager::onProbeSucceeded(quint64 generation, const api::ClusterSnapshot &snapshot)
{
    if (generation != m_generation) {
        return;
    }
    takeSnapshot(snapshot);
    m_feed->open(liveFeedUrl(m_current), m_token);
}

void ConnectionManager::onProbeFailed(quint64 generation, const ApiError &error)
{
    if (generation != m_generation) {
        return;
    }
    // Every node checks the same secret: another node would refuse the token too. A node the
    // operator named that cannot be verified is not tried again and again either (a wrong or
    // missing CA file); during a failover it is one failed candidate among others.
    const bool firstNode = m_rotation.failures() == 0 && !m_lastSnapshot;
    if (error.kind == ApiError::Kind::Refused
        || (error.kind == ApiError::Kind::Untrusted && firstNode)) {
        m_retryTimer.stop();
        ConnectionState failed;
        failed.kind = ConnectionState::Kind::Failed;
        failed.endpoint = m_current;
        failed.reason = error.text;
        setState(failed);
        return;
    }
    failOver(error.text);
}

void ConnectionManager::onFeedJoined()
{
    m_rotation.succeeded();
    ConnectionState connected;
    connected.kind = ConnectionState::Kind::Connected;
    connected.endpoint = m_current;
    if (m_lastSnapshot) {
        connected.nodeId = m_lastSnapshot->answeredBy;
    }
    setState(connected);
}

void ConnectionManager::onFeedLost(const QString &reason)
{
    failOver(reason);
}

void ConnectionManager::failOver(const QString &reason)
{
    ++m_generation; // a probe still in flight no longer counts
    const EndpointRotation::Attempt attempt = m_rotation.next();
    qCWarning(lcConnection).noquote() << endpointLabel(m_current) << "lost:" << reason
                                      << "- next:" << endpointLabel(attempt.endpoint) << "in"
                                      << attempt.delay.count() << "ms";
    ConnectionState reconnecting;
    reconnecting.kind = ConnectionState::Kind::Reconnecting;
    reconnecting.endpoint = attempt.endpoint;
    reconnecting.attempt = attempt.number;
    reconnecting.delay = attempt.delay;
    reconnecting.reason = reason;
    setState(reconnecting);
    m_retryTimer.start(attempt.delay);
}

void ConnectionManager::onRetryDue()
{
    dial(m_rotation.current());
}

void ConnectionManager::takeSnapshot(const api::ClusterSnapshot &snapshot)
{
    if (m_lastSnapshot) {
        api::releaseInBackground(*std::exchange(m_lastSnapshot, snapshot));
    } else {
        m_lastSnapshot = snapshot;
    }
    const QList<QUrl> endpoints = mergeEndpoints(m_operatorBase, admittedNodes(snapshot));
    if (endpoints != m_rotation.endpoints()) {
        m_rotation.setEndpoints(endpoints);
        Q_EMIT knownEndpointsChanged(endpoints);
    }
    if (m_state.kind == ConnectionState::Kind::Connected && m_state.nodeId != snapshot.answeredBy) {
        ConnectionState connected = m_state;
        connected.nodeId = snapshot.answeredBy;
        setState(connected);
    }
    Q_EMIT snapshotReceived(snapshot);
}

QList<QUrl> ConnectionManager::admittedNodes(const api::ClusterSnapshot &snapshot)
{
    QList<QUrl> nodes;
    for (const api::NodeSnapshot &node : snapshot.nodes) {
        const std::optional<QUrl> url = nodeBaseUrlFromAddress(node.clientAddress, m_operatorBase);
        if (url && m_allowlist.admits(*url)) {
            nodes.append(*url);
        } else if (!m_refusedAddresses.contains(node.clientAddress)) {
            m_refusedAddresses.insert(node.clientAddress);
            qCWarning(lcConnection).noquote()
                    << "not a failover candidate:" << node.id << node.clientAddress
                    << (url ? "(another scheme or a host outside the allowlist)"
                            : "(no address that can be dialled)");
        }
    }
    return nodes;
}

void ConnectionManager::fail(const QString &reason)
{
    ConnectionState failed;
    failed.kind = ConnectionState::Kind::Failed;
    failed.reason = reason;
    setState(failed);
}

void ConnectionManager::setState(ConnectionState state)
{
    if (state == m_state) {
        return;
    }
    m_state = std::move(state);
    qCDebug(lcConnection).noquote() << m_state.text();
    Q_EMIT stateChanged(m_state);
}

} // namespace rt::dashboard
