#pragma once

#include "server/channels/channel_service.h"
#include "server/channels/client_link.h"
#include "server/channels/socket_state.h"
#include "server/transport/websocket_connection.h"

#include <QObject>
#include <QTimer>

#include <deque>
#include <memory>
#include <vector>

namespace rt::metrics {
class Counter;
}

namespace rt::gateway {

class TenantSessions;

// One Phoenix socket (spec §2): decodes frames with the socket's serializer, answers
// heartbeats, applies Phoenix's routing rules (§2.6: unmatched topics, rejoin, leave, lenient
// join_ref) and hands channel events to the ChannelService. Owns the socket's channels.
// Created by the socket endpoint after the connect checks; owned by its WebSocketConnection;
// lives on that connection's worker thread.
class PhoenixSession final : public QObject,
                             public transport::WebSocketSession,
                             public channels::ClientLink
{
    Q_OBJECT
public:
    // `sessions` (optional) is the worker's index by tenant that this session joins while open.
    PhoenixSession(channels::ChannelService &service, channels::SocketState state,
                   TenantSessions *sessions = nullptr);
    ~PhoenixSession() override;

    // transport::WebSocketSession
    void onOpen(transport::WebSocketConnection &connection) override;
    void onText(QByteArray message) override;
    void onBinary(QByteArray message) override;
    void onClosed(quint16 code) override;
    void onTick(qint64 nowMs) override;
    void onSlowConsumer(qsizetype dropped) override;

    // channels::ClientLink
    protocol::Vsn vsn() const override { return m_state.vsn; }
    void sendFrame(const QByteArray &bytes, bool isBinary) override;
    void sendEncodedFrame(const QByteArray &webSocketFrame, const FlowLedgerPtr &ledger) override;
    void sendLater(int delayMs, const QByteArray &bytes) override;
    void closeSocket(quint16 code, const QByteArray &reason) override;
    void shutDownChannelLater(quint64 memberId, const QString &message,
                              const char *limitKind) override;
    QObject *context() override { return this; }
    void joinFinished(std::unique_ptr<channels::Channel> channel, bool closeSocket) override;

    qsizetype channelCount() const { return static_cast<qsizetype>(m_channels.size()); }

    // The tenant's credentials or access changed (or it was deleted or reloaded): every joined
    // channel gets the system message "Server requested disconnect", then the socket closes with
    // 1012 so that the client reconnects under the new configuration (spec §1.6).
    void disconnectByServer();

private:
    void route(const protocol::InboundMessage &message);
    void dispatch(const protocol::InboundMessage &message);
    void join(const protocol::InboundMessage &message);
    void leave(const protocol::InboundMessage &message);
    void replyUnmatched(const protocol::InboundMessage &message, const QByteArray &status,
                        const QByteArray &responseJson);
    channels::Channel *findChannel(const QByteArray &topic) const;
    void removeChannel(channels::Channel *channel);
    void ensureDelayTimer();
    void runDelayed();

    struct Delayed
    {
        qint64 dueMs;
        QByteArray frame; // empty: close the socket
        quint16 closeCode;
    };

    channels::ChannelService &m_service;
    channels::SocketState m_state;
    TenantSessions *m_sessions = nullptr;
    std::shared_ptr<metrics::Counter> m_messagesIn; // the tenant's, node-wide
    transport::WebSocketConnection *m_connection = nullptr; // owns this session
    transport::TcpConnection *m_tcp = nullptr; // under m_connection; fan-out writes straight here
    std::vector<std::unique_ptr<channels::Channel>> m_channels; // few per socket: linear search
    std::deque<Delayed> m_delayed; // in due order
    std::unique_ptr<QTimer> m_delayTimer; // created on first use
    bool m_closed = false;
    bool m_hadChannels = false; // joined at least once: the empty-socket sweeper applies
    qint64 m_emptySinceMs = -1; // loop time since which it has no channels, -1 while it has
    bool m_closing = false; // a close is scheduled; further frames are ignored
    // A join is waiting for the tenant database: the socket's next messages wait behind it, in
    // order, as they would behind a Phoenix channel's join (bounded: see route()).
    bool m_joinPending = false;
    std::deque<protocol::InboundMessage> m_heldBack;
    qsizetype m_heldBackBytes = 0; // of m_heldBack, bounded by MaxHeldBackBytes
};

} // namespace rt::gateway
