#pragma once

#include "server/channels/channel_service.h"
#include "server/gateway/admin_feed_endpoint.h"
#include "server/gateway/socket_endpoint.h"
#include "server/http/router.h"
#include "server/transport/io_loop.h"

#include <QObject>

#include <functional>

namespace rt::pubsub {
class Hub;
class SequencingPubSub;
} // namespace rt::pubsub

namespace rt::metrics {
class ServerMetrics;
}

namespace rt::app {

// Everything one worker thread owns: its I/O loop with the connections, its pubsub hub, its
// channel service and its request router. Created on, and lives on, its worker thread; deleted
// there when the thread finishes.
class WorkerNode : public QObject
{
    Q_OBJECT
public:
    // The node-wide services every worker uses (they outlive the workers).
    struct Shared
    {
        tenants::TenantDirectory &tenants;
        tenants::TenantUsageRegistry &usage;
        const tenants::TenantRates &rates;
        metrics::ServerMetrics &metrics;
        const pubsub::PubSub &pubsub; // broadcasts (the sequencer around NodePubSub)
        presence::PresenceStore &presence;
        const Clock &clock;
        const std::atomic<bool> &shuttingDown;
        channels::ChannelSettings settings;
        const gateway::ConnectGate &gate;
        transport::IoLoop::Limits socketLimits; // output bounds and slow-consumer rules
        int websocketIdleTimeoutMs;
        std::function<void(http::Router &)> registerRoutes; // REST routes shared by all workers
        cdc::CdcService *cdc; // tenant databases (thread-safe facade)
        gateway::AdminFeedEndpoint::Parts adminFeed; // the admin live feed's socket route
        // Whether a request's head carries a credential some route accepts (operator or tenant
        // token): only then may its body be larger than MaxUnauthenticatedBodyBytes.
        std::function<bool(const wire::HttpRequest &head)> carriesCredentials;
        // The client port's TLS (null: plaintext); every worker takes its current context.
        std::shared_ptr<tls::ReloadableServerContext> clientTls;
        // The histories joins recover from (the same object as `pubsub`).
        const pubsub::SequencingPubSub *sequencer = nullptr;
    };

    // The largest body read before the request is authenticated.
    static constexpr qsizetype MaxUnauthenticatedBodyBytes = qsizetype{ 64 } * 1024;

    WorkerNode(const Shared &shared, QObject *parent);
    ~WorkerNode() override;

    transport::IoLoop *loop() const { return m_loop; }
    pubsub::Hub *hub() const { return m_hub; }

    // Closes every WebSocket with 1012 (Service Restart), writes what is queued, then drops
    // every connection. Called on this worker's thread just before it stops.
    void shutdown();

    // "Server requested disconnect" + close 1012 for the tenant's sockets on this worker.
    void disconnectTenant(const QByteArray &tenantId);

    // This worker's share of the node's figures (admin view). Worker thread.
    qsizetype socketCount() const { return m_endpoint.sessionCount(); }
    qsizetype channelCount() const;

private:
    pubsub::Hub *m_hub; // child
    channels::ChannelService m_channels;
    gateway::SocketEndpoint m_endpoint;
    gateway::AdminFeedEndpoint m_adminFeed;
    http::Router m_router;
    transport::IoLoop *m_loop; // child
};

} // namespace rt::app
