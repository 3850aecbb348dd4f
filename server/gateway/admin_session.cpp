#include "server/gateway/admin_session.h"

#include "server/gateway/logging.h"
#include "server/transport/io_loop.h"
#include "server/transport/tcp_connection.h"
#include "shared/protocol/phoenix_codec.h"

#include <QLoggingCategory>
#include <QPointer>

namespace rt::gateway {

namespace {

const QByteArray Topic = QByteArrayLiteral("admin:cluster");
const QByteArray OkEmpty = QByteArrayLiteral("{}");
const QByteArray UnmatchedTopic = QByteArrayLiteral("{\"reason\":\"unmatched topic\"}");
// A client that has not read this much of earlier snapshots misses the next ones.
constexpr qsizetype MaxQueuedBytes = qsizetype{ 8 } * 1024 * 1024;

} // namespace

AdminSession::AdminSession(protocol::Vsn vsn, AdminSnapshotSource source, int pushIntervalMs)
    : m_vsn(vsn),
      m_source(std::move(source)),
      m_timer(this)
{
    m_timer.setInterval(pushIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &AdminSession::requestSnapshot);
}

AdminSession::~AdminSession() = default;

void AdminSession::onOpen(transport::WebSocketConnection &connection)
{
    m_connection = &connection;
    m_mailbox = connection.tcp().loop().mailbox();
}

void AdminSession::onText(QByteArray message)
{
    if (m_closed) {
        return;
    }
    const Result<protocol::InboundMessage> decoded = protocol::decodeText(message, m_vsn);
    if (!decoded) {
        qCDebug(lcGateway) << "admin feed: undecodable frame:" << decoded.error().message;
        return;
    }
    const protocol::InboundMessage &inbound = *decoded;
    if (inbound.topic == "phoenix" && inbound.event == "heartbeat") {
        reply(inbound, "ok", OkEmpty);
        return;
    }
    if (inbound.topic != Topic) {
        reply(inbound, "error", UnmatchedTopic);
        return;
    }
    if (inbound.event == "phx_join") {
        m_joinRef = inbound.joinRef;
        reply(inbound, "ok", OkEmpty);
        requestSnapshot();
        m_timer.start();
    } else if (inbound.event == "phx_leave") {
        m_joinRef.clear();
        m_timer.stop();
        reply(inbound, "ok", OkEmpty);
    }
    // Other events on the admin topic mean nothing: ignored.
}

void AdminSession::onBinary(QByteArray message)
{
    Q_UNUSED(message)
    qCDebug(lcGateway) << "admin feed: binary frame ignored";
}

void AdminSession::onClosed(quint16 code)
{
    Q_UNUSED(code)
    m_closed = true;
    m_timer.stop();
    m_connection = nullptr;
}

void AdminSession::reply(const protocol::InboundMessage &message, QByteArrayView status,
                         QByteArrayView responseJson)
{
    m_connection->sendText(protocol::encodeReply(m_vsn, message.joinRef, message.ref, message.topic,
                                                 status, responseJson));
}

void AdminSession::requestSnapshot()
{
    if (m_closed || m_joinRef.isEmpty() || m_requestPending) {
        return;
    }
    if (m_connection->queuedBytes() > MaxQueuedBytes) {
        return;
    }
    m_requestPending = true;
    // The answer comes on another thread: back through the worker's mailbox, to this session
    // if it still exists.
    const runtime::MailboxPtr mailbox = m_mailbox;
    const QPointer<AdminSession> self(this);
    m_source([mailbox, self](const QByteArray &json) {
        mailbox->post([self, json] {
            if (self) {
                self->deliver(json);
            }
        });
    });
}

void AdminSession::deliver(const QByteArray &json)
{
    m_requestPending = false;
    if (m_closed || m_joinRef.isEmpty() || json.isEmpty()) {
        return;
    }
    m_connection->sendText(protocol::encodePush(m_vsn, m_joinRef, QByteArrayLiteral("null"), Topic,
                                                QByteArrayLiteral("snapshot"), json));
}

} // namespace rt::gateway
