#include "server/app/worker_node.h"

#include "server/app/logging.h"
#include "server/metrics/catalog.h"
#include "server/pubsub/hub.h"
#include "server/transport/http_connection.h"
#include "server/transport/io_loop.h"
#include "server/transport/tcp_connection.h"

#include <QLoggingCategory>

namespace rt::app {

namespace {

channels::ChannelContext contextFor(const WorkerNode::Shared &shared, pubsub::Hub &hub)
{
    return channels::ChannelContext{
        shared.tenants, shared.usage,    shared.rates, hub,
        shared.pubsub,  shared.presence, shared.clock, shared.shuttingDown,
        shared.metrics, shared.settings, shared.cdc,   shared.sequencer
    };
}

} // namespace

WorkerNode::WorkerNode(const Shared &shared, QObject *parent)
    : QObject(parent),
      m_hub(new pubsub::Hub(this)), // child
      m_channels(contextFor(shared, *m_hub)),
      m_endpoint(shared.gate, m_channels),
      m_adminFeed(shared.adminFeed)
{
    m_hub->setFanoutLatency(
            shared.metrics.fanoutLatency.labels({ metrics::label_values::Broadcast }),
            shared.metrics.fanoutLatency.labels({ metrics::label_values::Presence }));
    const auto socketRoute = [this](const wire::HttpRequest &request, const http::RouteParams &,
                                    const transport::HttpResponder &responder) {
        m_endpoint.handle(request, responder);
    };
    // realtime-js connects to <endpoint>/websocket; the router strips "/realtime/v1".
    // Every method: the endpoint answers anything but a GET upgrade with 400, as Phoenix does.
    m_router.add("*", "/socket/websocket", socketRoute);
    m_router.add("*", "/websocket", socketRoute);
    // The operators' live feed of the cluster (docs/admin-api.md).
    m_router.add("*", "/api/admin/live/websocket",
                 [this](const wire::HttpRequest &request, const http::RouteParams &,
                        const transport::HttpResponder &responder) {
                     m_adminFeed.handle(request, responder);
                 });
    shared.registerRoutes(m_router);

    transport::HttpConnection::Limits httpLimits;
    httpLimits.websocket.idleTimeoutMs = shared.websocketIdleTimeoutMs;
    // A large body is read only for a request whose head is authenticated; the token is
    // checked again (and charged) when the request is handled.
    httpLimits.parser.bodyLimit = [credentials = shared.carriesCredentials,
                                   maxBody = httpLimits.parser.maxBodyBytes](
                                          const wire::HttpRequest &head) {
        const bool small = !head.hasHeader("transfer-encoding")
                && head.header("content-length").toLongLong() <= MaxUnauthenticatedBodyBytes;
        if (small || !credentials || !credentials(head)) {
            return MaxUnauthenticatedBodyBytes;
        }
        return maxBody;
    };
    m_loop = new transport::IoLoop( // child
            [this, httpLimits](transport::TcpConnection &connection) {
                connection.setHandler(std::make_unique<transport::HttpConnection>(
                        connection, m_router, httpLimits));
            },
            shared.socketLimits, this);
    m_loop->setTls(shared.clientTls);
}

WorkerNode::~WorkerNode()
{
    // Connections (and the sessions inside them) go first: they unsubscribe from the hub.
    delete m_loop;
    m_loop = nullptr;
}

void WorkerNode::disconnectTenant(const QByteArray &tenantId)
{
    const int count = m_endpoint.disconnectTenant(tenantId);
    if (count > 0) {
        qCInfo(lcApp) << "disconnecting" << count << "socket(s) of tenant" << tenantId;
    }
}

qsizetype WorkerNode::channelCount() const
{
    return m_hub->membershipCount();
}

void WorkerNode::shutdown()
{
    m_loop->shutdown();
}

} // namespace rt::app
