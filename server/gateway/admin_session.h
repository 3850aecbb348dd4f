#pragma once

#include "server/runtime/mailbox.h"
#include "server/transport/websocket_connection.h"
#include "shared/protocol/phoenix_message.h"

#include <QObject>
#include <QTimer>

#include <functional>

namespace rt::protocol {
struct InboundMessage;
}

namespace rt::gateway {

// Produces the admin API's cluster snapshot as compact JSON. Any thread, never blocks: `done`
// is called later on a thread of the source's choosing, with empty bytes when there is none.
using AdminSnapshotSource = std::function<void(std::function<void(QByteArray json)> done)>;

// One connection of the admin live feed (docs/admin-api.md, /api/admin/live/websocket): a
// Phoenix socket with a single topic, `admin:cluster`. A join is answered ok and followed by a
// `snapshot` push at once and then every push interval; heartbeats are answered; any other
// topic gets "unmatched topic". The snapshot is asked of the source and sent when it arrives
// (one request at a time; a push is skipped while the client has not read the previous ones).
// Owned by its WebSocketConnection; lives on that connection's worker thread.
class AdminSession final : public QObject, public transport::WebSocketSession
{
    Q_OBJECT
public:
    AdminSession(protocol::Vsn vsn, AdminSnapshotSource source, int pushIntervalMs);
    ~AdminSession() override;

    // transport::WebSocketSession
    void onOpen(transport::WebSocketConnection &connection) override;
    void onText(QByteArray message) override;
    void onBinary(QByteArray message) override;
    void onClosed(quint16 code) override;
    // 1001 (Going Away): the dashboard moves to another node it knows.
    quint16 shutdownCloseCode() const override { return wire::ws_close::GoingAway; }

private:
    void reply(const protocol::InboundMessage &message, QByteArrayView status,
               QByteArrayView responseJson);
    void requestSnapshot();
    void deliver(const QByteArray &json);

    protocol::Vsn m_vsn;
    AdminSnapshotSource m_source;
    transport::WebSocketConnection *m_connection = nullptr; // owns this session
    runtime::MailboxPtr m_mailbox; // the worker loop's: snapshots come back through it
    QTimer m_timer; // a child
    QByteArray m_joinRef; // raw JSON token of the join; empty while not joined
    bool m_requestPending = false;
    bool m_closed = false;
};

} // namespace rt::gateway
