#include "dashboard/api/live_feed_protocol.h"

#include "shared/protocol/phoenix_codec.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

namespace rt::dashboard {

namespace {

const QByteArray PhoenixTopic = QByteArrayLiteral("phoenix");
const QByteArray ReplyEvent = QByteArrayLiteral("phx_reply");

QByteArray frame(QByteArrayView topic, QByteArrayView event, const QByteArray &ref,
                 const QByteArray &joinRef)
{
    QByteArray out = QByteArrayLiteral("{\"topic\":") + protocol::jsonString(topic)
            + QByteArrayLiteral(",\"event\":") + protocol::jsonString(event)
            + QByteArrayLiteral(",\"payload\":{},\"ref\":") + ref;
    if (!joinRef.isEmpty()) {
        out += QByteArrayLiteral(",\"join_ref\":") + joinRef;
    }
    return out + '}';
}

// {"status": ..., "response": ...} of a phx_reply.
struct Reply
{
    QString status;
    QJsonObject response;
};

Reply readReply(const QByteArray &payload)
{
    QJsonParseError error{};
    const QJsonObject object = QJsonDocument::fromJson(payload, &error).object();
    return { object.value(QLatin1String("status")).toString(),
             object.value(QLatin1String("response")).toObject() };
}

} // namespace

void LiveFeedProtocol::reset()
{
    m_joinRef.clear();
    m_heartbeatRef.clear();
    m_joined = false;
}

QByteArray LiveFeedProtocol::nextRef()
{
    return '"' + QByteArray::number(++m_lastRef) + '"';
}

QByteArray LiveFeedProtocol::joinFrame()
{
    m_joinRef = nextRef();
    m_joined = false;
    return frame(Topic, "phx_join", m_joinRef, m_joinRef);
}

QByteArray LiveFeedProtocol::heartbeatFrame()
{
    m_heartbeatRef = nextRef();
    return frame(PhoenixTopic, "heartbeat", m_heartbeatRef, QByteArray());
}

LiveFeedProtocol::Event LiveFeedProtocol::handleFrame(QByteArrayView text)
{
    Event event;
    Result<protocol::InboundMessage> decoded = protocol::decodeText(text, protocol::Vsn::V1);
    if (!decoded) {
        event.kind = Event::Kind::Malformed;
        event.text = tr("The live feed sent a frame that is not a Phoenix message: %1")
                             .arg(decoded.error().message);
        return event;
    }
    const protocol::InboundMessage &message = *decoded;
    if (message.topic == PhoenixTopic) {
        if (message.event == ReplyEvent && !m_heartbeatRef.isEmpty()
            && message.ref == m_heartbeatRef) {
            m_heartbeatRef.clear();
            event.kind = Event::Kind::HeartbeatAcknowledged;
        }
        return event;
    }
    if (message.topic != Topic) {
        return event;
    }
    if (message.event == ReplyEvent) {
        if (m_joinRef.isEmpty() || message.ref != m_joinRef) {
            return event;
        }
        const Reply reply = readReply(message.payload);
        if (reply.status == QLatin1String("ok")) {
            m_joined = true;
            event.kind = Event::Kind::Joined;
        } else {
            const QString reason = reply.response.value(QLatin1String("reason")).toString();
            event.kind = Event::Kind::JoinRefused;
            event.text = reason.isEmpty()
                    ? tr("The server refused to send the live feed (status \"%1\").")
                              .arg(reply.status)
                    : tr("The server refused to send the live feed: %1").arg(reason);
        }
        return event;
    }
    if (message.event == "snapshot") {
        Result<api::ClusterSnapshot> snapshot = parseSnapshot(message.payload);
        if (!snapshot) {
            event.kind = Event::Kind::SnapshotRejected;
            event.text = tr("A snapshot from the live feed could not be read: %1")
                                 .arg(snapshot.error().message);
            return event;
        }
        event.kind = Event::Kind::Snapshot;
        event.snapshot = std::move(snapshot).value();
        return event;
    }
    if (message.event == "phx_close" || message.event == "phx_error") {
        m_joined = false;
        event.kind = Event::Kind::ChannelClosed;
        event.text = tr("The server closed the live feed's channel (%1).")
                             .arg(QString::fromUtf8(message.event));
    }
    return event;
}

Result<api::ClusterSnapshot> LiveFeedProtocol::parseSnapshot(QByteArrayView payload)
{
    return api::ClusterSnapshot::fromJson(payload);
}

} // namespace rt::dashboard
