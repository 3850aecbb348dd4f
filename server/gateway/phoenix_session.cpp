#include "server/gateway/phoenix_session.h"

#include "server/gateway/logging.h"
#include "server/gateway/tenant_sessions.h"
#include "server/metrics/catalog.h"
#include "server/transport/io_loop.h"
#include "shared/core/clock.h"
#include "shared/protocol/phoenix_codec.h"

#include <QLoggingCategory>

namespace rt::gateway {

namespace {

const QByteArray OkEmpty = QByteArrayLiteral("{}");
// Join errors one socket may have waiting for their backoff before it is closed.
constexpr std::size_t MaxDelayedFrames = 1000;
// Messages one socket may send while a join waits for the tenant database, by count and by
// their bytes (a few frames at the 5 MB frame limit would otherwise hold gigabytes).
constexpr std::size_t MaxHeldBackMessages = 1000;
constexpr qsizetype MaxHeldBackBytes = qsizetype{ 8 } * 1024 * 1024;

qsizetype heldBytes(const protocol::InboundMessage &message)
{
    return message.topic.size() + message.event.size() + message.payload.size()
            + message.userEvent.size() + message.metadata.size() + message.joinRef.size()
            + message.ref.size();
}
const QByteArray UnmatchedTopic = QByteArrayLiteral("{\"reason\":\"unmatched topic\"}");

} // namespace

PhoenixSession::PhoenixSession(channels::ChannelService &service, channels::SocketState state,
                               TenantSessions *sessions)
    : m_service(service),
      m_state(std::move(state)),
      m_sessions(sessions),
      m_messagesIn(m_service.context().metrics.messagesIn.labels({ m_state.tenantId }))
{ }

PhoenixSession::~PhoenixSession()
{
    // Normally onClosed() already released everything; this covers teardown of the worker.
    onClosed(1006);
}

void PhoenixSession::onOpen(transport::WebSocketConnection &connection)
{
    m_connection = &connection;
    m_tcp = &connection.tcp();
    if (m_sessions != nullptr) {
        m_sessions->add(m_state.tenantId, this);
    }
}

void PhoenixSession::shutDownChannelLater(quint64 memberId, const QString &message,
                                          const char *limitKind)
{
    if (limitKind != nullptr) {
        channels::countLimitRejection(m_service.context(), m_state.tenantId, limitKind);
    }
    // Queued on this session's own thread: runs after the delivery pass that asked for it, and
    // never after the session is gone (Qt drops events of a deleted receiver).
    QMetaObject::invokeMethod(
            this,
            [this, memberId, message] {
                if (m_closed) {
                    return;
                }
                for (const auto &channel : m_channels) {
                    if (channel->memberId() == memberId) {
                        m_service.shutdown(m_state, *channel, message);
                        removeChannel(channel.get());
                        return;
                    }
                }
            },
            Qt::QueuedConnection);
}

void PhoenixSession::disconnectByServer()
{
    if (m_closed || m_closing || m_connection == nullptr) {
        return;
    }
    // A fastlane push: join_ref and ref null, and no "channel" key, exactly as upstream.
    static const QByteArray Payload = QByteArrayLiteral(
            "{\"extension\":\"system\",\"status\":\"ok\",\"message\":\"Server requested "
            "disconnect\"}");
    for (const auto &channel : m_channels) {
        sendFrame(protocol::encodePush(m_state.vsn, "null", "null", channel->topic(),
                                       QByteArrayLiteral("system"), Payload),
                  false);
    }
    closeSocket(wire::ws_close::ServiceRestart, QByteArray());
    m_closing = true; // whatever the client still sends is ignored
}

void PhoenixSession::sendEncodedFrame(const QByteArray &webSocketFrame, const FlowLedgerPtr &ledger)
{
    // Already framed for every recipient: skip the WebSocket layer (the hot path of fan-out).
    // m_closed is set the moment the WebSocket starts closing, so nothing follows a close frame.
    if (!m_closed) {
        m_tcp->send(webSocketFrame, ledger);
    }
}

void PhoenixSession::onSlowConsumer(qsizetype dropped)
{
    // Nothing is lost silently: every channel learns that messages were dropped, and how many
    // (of the socket's queue; one count for all its channels), before the close (1008).
    const QString message = QStringLiteral("Disconnected: this client read too slowly; %1 queued "
                                           "messages were not delivered")
                                    .arg(dropped);
    for (const auto &channel : m_channels) {
        channel->pushSystem(QStringLiteral("system"), QStringLiteral("error"), message);
    }
}

void PhoenixSession::sendFrame(const QByteArray &bytes, bool isBinary)
{
    if (m_closed || m_connection == nullptr) {
        return;
    }
    if (isBinary) {
        m_connection->sendBinary(bytes);
    } else {
        m_connection->sendText(bytes);
    }
}

void PhoenixSession::sendLater(int delayMs, const QByteArray &bytes)
{
    if (delayMs <= 0 && m_delayed.empty()) {
        sendFrame(bytes, false);
        return;
    }
    if (m_delayed.size() >= MaxDelayedFrames) {
        // Upstream handles one message per socket at a time, so a client waiting for join errors
        // cannot queue more; here the wait is asynchronous, so bound what a client can pile up.
        qCInfo(lcGateway) << "closing a socket with" << m_delayed.size()
                          << "join errors waiting for their backoff";
        // Close at once (after this frame is handled) and ignore whatever else it sends.
        m_closing = true;
        m_delayed.clear();
        m_delayed.push_back(Delayed{ m_connection->tcp().loop().nowMs(), QByteArray(), 1008 });
        m_delayTimer->start(0);
        return;
    }
    const qint64 due = m_connection->tcp().loop().nowMs() + qMax(0, delayMs);
    // Keep due order; equal delays keep insertion order.
    auto it = m_delayed.end();
    while (it != m_delayed.begin() && std::prev(it)->dueMs > due) {
        --it;
    }
    m_delayed.insert(it, Delayed{ due, bytes, 0 });
    ensureDelayTimer();
    runDelayed();
}

void PhoenixSession::closeSocket(quint16 code, const QByteArray &reason)
{
    Q_UNUSED(reason)
    if (m_closed) {
        return;
    }
    // After anything still waiting to be sent (a delayed join error precedes its close).
    const qint64 due =
            m_delayed.empty() ? m_connection->tcp().loop().nowMs() : m_delayed.back().dueMs;
    m_delayed.push_back(Delayed{ due, QByteArray(), code });
    ensureDelayTimer();
    // Never close in the middle of handling a frame: let the current call stack unwind.
    m_delayTimer->start(0);
}

void PhoenixSession::ensureDelayTimer()
{
    if (!m_delayTimer) {
        m_delayTimer = std::make_unique<QTimer>();
        m_delayTimer->setSingleShot(true);
        m_delayTimer->setTimerType(Qt::PreciseTimer);
        connect(m_delayTimer.get(), &QTimer::timeout, this, &PhoenixSession::runDelayed);
    }
}

void PhoenixSession::runDelayed()
{
    if (m_closed) {
        m_delayed.clear();
        return;
    }
    const qint64 now = m_connection->tcp().loop().nowMs();
    while (!m_delayed.empty() && m_delayed.front().dueMs <= now) {
        const Delayed next = m_delayed.front();
        m_delayed.pop_front();
        if (next.frame.isEmpty()) {
            m_connection->close(next.closeCode);
            return; // onClosed() cleared the session
        }
        sendFrame(next.frame, false);
    }
    if (!m_delayed.empty()) {
        m_delayTimer->start(static_cast<int>(m_delayed.front().dueMs - now));
    }
}

void PhoenixSession::onText(QByteArray message)
{
    m_messagesIn->inc();
    Result<protocol::InboundMessage> decoded = protocol::decodeText(message, m_state.vsn);
    if (!decoded) {
        // Phoenix drops undecodable frames and keeps the connection (MalformedWebSocketMessage).
        qCDebug(lcGateway) << "MalformedWebSocketMessage:" << decoded.error().message;
        return;
    }
    route(*decoded);
}

void PhoenixSession::onBinary(QByteArray message)
{
    m_messagesIn->inc();
    if (m_state.vsn != protocol::Vsn::V2) {
        qCDebug(lcGateway) << "MalformedWebSocketMessage: binary frame on a 1.0.0 socket";
        return;
    }
    Result<protocol::InboundMessage> decoded = protocol::decodeBinary(message);
    if (!decoded) {
        qCDebug(lcGateway) << "MalformedWebSocketMessage:" << decoded.error().message;
        return;
    }
    route(*decoded);
}

void PhoenixSession::route(const protocol::InboundMessage &message)
{
    if (m_closed || m_closing) {
        return;
    }
    if (m_joinPending) {
        const qsizetype bytes = heldBytes(message);
        if (m_heldBack.size() >= MaxHeldBackMessages
            || m_heldBackBytes + bytes > MaxHeldBackBytes) {
            qCInfo(lcGateway) << "closing a socket that sent" << m_heldBack.size() + 1
                              << "messages," << m_heldBackBytes + bytes
                              << "bytes, while a join was pending";
            closeSocket(1008, QByteArray());
            m_closing = true;
            return;
        }
        m_heldBackBytes += bytes;
        m_heldBack.push_back(message);
        return;
    }
    dispatch(message);
}

void PhoenixSession::joinFinished(std::unique_ptr<channels::Channel> channel, bool closeSocket)
{
    m_joinPending = false;
    if (m_closed) {
        // The socket went away while the database answered: undo what the join took.
        if (channel) {
            m_service.release(m_state, *channel);
            m_service.releaseSocket(m_state);
        }
        return;
    }
    if (channel) {
        m_channels.push_back(std::move(channel));
        m_hadChannels = true;
    }
    if (closeSocket) {
        this->closeSocket(1001, QByteArrayLiteral("tenant not found"));
    }
    // Replay what waited, until another join has to wait.
    while (!m_heldBack.empty() && !m_joinPending && !m_closed && !m_closing) {
        const protocol::InboundMessage next = std::move(m_heldBack.front());
        m_heldBack.pop_front();
        m_heldBackBytes -= heldBytes(next);
        dispatch(next);
    }
}

void PhoenixSession::dispatch(const protocol::InboundMessage &message)
{
    if (message.topic == "phoenix" && message.event == "heartbeat") {
        sendFrame(protocol::encodeReply(m_state.vsn, message.joinRef, message.ref, message.topic,
                                        QByteArrayLiteral("ok"), OkEmpty),
                  false);
        return;
    }
    if (message.event == "phx_join") {
        join(message);
        return;
    }
    if (message.event == "phx_leave") {
        leave(message);
        return;
    }
    channels::Channel *channel = findChannel(message.topic);
    if (channel == nullptr) {
        replyUnmatched(message, QByteArrayLiteral("error"), UnmatchedTopic);
        return;
    }
    // Delivered whatever the join_ref (upstream's deliberate leniency, spec §2.6).
    if (m_service.handleEvent(m_state, *channel, message)
        == channels::ChannelService::Outcome::CloseChannel) {
        removeChannel(channel);
    }
}

void PhoenixSession::join(const protocol::InboundMessage &message)
{
    if (!message.topic.startsWith("realtime:")) {
        replyUnmatched(message, QByteArrayLiteral("error"), UnmatchedTopic);
        return;
    }
    if (channels::Channel *existing = findChannel(message.topic)) {
        // A rejoin replaces the old channel, whose join_ref is dead from now on.
        existing->pushClose();
        m_service.release(m_state, *existing);
        removeChannel(existing);
    }
    channels::ChannelService::JoinResult result = m_service.join(m_state, *this, message);
    if (result.pending) {
        m_joinPending = true;
        return;
    }
    if (result.channel) {
        m_channels.push_back(std::move(result.channel));
        m_hadChannels = true;
    }
    if (result.closeSocket) {
        closeSocket(1001, QByteArrayLiteral("tenant not found"));
    }
}

void PhoenixSession::leave(const protocol::InboundMessage &message)
{
    channels::Channel *channel = findChannel(message.topic);
    if (channel == nullptr) {
        replyUnmatched(message, QByteArrayLiteral("ok"), OkEmpty);
        return;
    }
    if (message.joinRef != "null" && message.joinRef != channel->joinRef()) {
        return; // a leave for an older join of this topic: ignored
    }
    channel->reply(message.ref, QByteArrayLiteral("ok"), OkEmpty);
    channel->pushClose();
    m_service.release(m_state, *channel);
    removeChannel(channel);
}

void PhoenixSession::replyUnmatched(const protocol::InboundMessage &message,
                                    const QByteArray &status, const QByteArray &responseJson)
{
    sendFrame(protocol::encodeReply(m_state.vsn, message.joinRef, message.ref, message.topic,
                                    status, responseJson),
              false);
}

channels::Channel *PhoenixSession::findChannel(const QByteArray &topic) const
{
    for (const auto &channel : m_channels) {
        if (channel->topic() == topic) {
            return channel.get();
        }
    }
    return nullptr;
}

void PhoenixSession::removeChannel(channels::Channel *channel)
{
    for (auto it = m_channels.begin(); it != m_channels.end(); ++it) {
        if (it->get() == channel) {
            m_channels.erase(it);
            return;
        }
    }
}

void PhoenixSession::onClosed(quint16 code)
{
    if (m_sessions != nullptr && m_connection != nullptr) {
        m_sessions->remove(m_state.tenantId, this);
    }
    if (m_closed) {
        return;
    }
    Q_UNUSED(code)
    m_closed = true;
    if (m_tcp != nullptr && m_tcp->isSlowConsumer()) {
        metrics::ServerMetrics &metrics = m_service.context().metrics;
        metrics.slowConsumerDisconnects.labels({ m_state.tenantId })->inc();
        metrics.slowConsumerDroppedMessages.labels({ m_state.tenantId })
                ->inc(static_cast<quint64>(m_tcp->droppedFrames()));
    }
    for (const auto &channel : m_channels) {
        m_service.release(m_state, *channel);
    }
    m_channels.clear();
    m_service.releaseSocket(m_state);
    m_delayed.clear();
    m_delayTimer.reset();
}

void PhoenixSession::onTick(qint64 nowMs)
{
    if (m_closed) {
        return;
    }
    if (m_channels.empty()) {
        // Sockets that never joined are left to the idle timeout, as upstream's sweeper does.
        if (!m_hadChannels) {
            return;
        }
        if (m_emptySinceMs < 0) {
            m_emptySinceMs = nowMs;
        } else if (nowMs - m_emptySinceMs >= m_service.context().settings.noChannelTimeoutMs) {
            qCInfo(lcGateway) << "dropping a socket of tenant" << m_state.tenantId
                              << "without channels for" << (nowMs - m_emptySinceMs) << "ms";
            m_connection->abort();
        }
        return;
    }
    m_emptySinceMs = -1;
    const qint64 nowSeconds = m_service.context().clock.epochMs() / 1000;
    for (std::size_t i = 0; i < m_channels.size();) {
        channels::Channel *channel = m_channels[i].get();
        if (m_service.tick(m_state, *channel, nowSeconds)
            == channels::ChannelService::Outcome::CloseChannel) {
            m_channels.erase(m_channels.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
            ++i;
        }
    }
}

} // namespace rt::gateway
