#pragma once

#include "shared/core/flow_ledger.h"
#include "shared/protocol/phoenix_message.h"

#include <QByteArray>
#include <QByteArrayView>

class QObject;

#include <memory>

namespace rt::channels {

class Channel;

// The channels' view of the client socket they belong to. Implemented by the gateway's Phoenix
// session; lives on (and is only called on) the socket's worker thread.
class ClientLink
{
public:
    virtual ~ClientLink() = default;
    virtual protocol::Vsn vsn() const = 0;
    // Queues a Phoenix-encoded message (text, or a binary kind-4 frame).
    virtual void sendFrame(const QByteArray &bytes, bool isBinary) = 0;
    // Queues a complete WebSocket frame encoded once for many recipients (fan-out): the shared
    // bytes go to the socket as they are. With a ledger (a regulated stream) the socket's
    // queue and slowness are reported to it.
    virtual void sendEncodedFrame(const QByteArray &webSocketFrame,
                                  const FlowLedgerPtr &ledger) = 0;
    // Queues a text message after delayMs (join error backoff); dropped if the socket closed.
    virtual void sendLater(int delayMs, const QByteArray &bytes) = 0;
    // Closes the socket with a WebSocket close code once the current message is handled.
    virtual void closeSocket(quint16 code, const QByteArray &reason) = 0;
    // Shuts the channel with `memberId` down (system error `message` + phx_close) once the
    // current delivery pass is over; a no-op if it left meanwhile. Fan-out cannot change
    // membership while it runs, so a limit hit during delivery goes through here.
    // `limitKind` names the limit for the rejection metrics (metrics::label_values), or is
    // nullptr when no limit was hit (e.g. permissions revoked).
    virtual void shutDownChannelLater(quint64 memberId, const QString &message,
                                      const char *limitKind) = 0;
    // A QObject on the socket's thread that dies with the socket: the context for callbacks
    // from other threads (e.g. presence snapshots).
    virtual QObject *context() = 0;
    // A join that had to wait for the tenant database finished: `channel` is the joined channel
    // (its reply already queued) or null after an error reply; `closeSocket` as for JoinResult.
    // The session holds back the socket's other messages until then, as Phoenix does.
    virtual void joinFinished(std::unique_ptr<Channel> channel, bool closeSocket) = 0;
};

} // namespace rt::channels
