#include "server/cdc/stream_wire.h"

#include "server/pubsub/cluster_bytes.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace rt::cdc::wire {

namespace {

constexpr quint8 DeliveryVersion = 2;
// The floor's offset in an encoded delivery: after the version, incarnation, log id and seq.
constexpr qsizetype FloorOffset = 1 + 8 + 8 + 8;
constexpr quint8 PrivateFlag = 0x01;

// 64-bit ids travel as decimal strings (JSON numbers lose precision beyond 2^53).
QString idText(quint64 id)
{
    return QString::number(id);
}

std::optional<quint64> idOf(const QJsonValue &value)
{
    if (!value.isString()) {
        return std::nullopt;
    }
    bool ok = false;
    const quint64 id = value.toString().toULongLong(&ok);
    return ok ? std::optional<quint64>(id) : std::nullopt;
}

QJsonObject requestJson(const SubscribeRequest &request)
{
    QJsonArray elements;
    for (const SubscribeRequest::Element &element : request.elements) {
        elements.append(QJsonObject{ { QStringLiteral("id"), QString::number(element.id) },
                                     { QStringLiteral("params"), element.params } });
    }
    return QJsonObject{
        { QStringLiteral("tenant"), QString::fromUtf8(request.topic.tenant()) },
        { QStringLiteral("topic"), QString::fromUtf8(request.topic.subTopic()) },
        { QStringLiteral("private"), request.topic.isPrivate() },
        { QStringLiteral("member"), idText(request.memberId) },
        { QStringLiteral("legacy"), request.legacy },
        { QStringLiteral("claims"), request.claims },
        { QStringLiteral("elements"), elements },
    };
}

Result<SubscribeRequest> requestOf(const QJsonObject &object)
{
    const QJsonValue tenant = object.value(QLatin1String("tenant"));
    const QJsonValue topic = object.value(QLatin1String("topic"));
    const QJsonValue isPrivate = object.value(QLatin1String("private"));
    const QJsonValue legacy = object.value(QLatin1String("legacy"));
    const QJsonValue claims = object.value(QLatin1String("claims"));
    const QJsonValue elements = object.value(QLatin1String("elements"));
    const std::optional<quint64> member = idOf(object.value(QLatin1String("member")));
    if (!tenant.isString() || tenant.toString().isEmpty() || !topic.isString()
        || !isPrivate.isBool() || !legacy.isBool() || !claims.isObject() || !elements.isArray()
        || !member) {
        return Error{ QStringLiteral("subscribe: missing or mistyped fields") };
    }
    SubscribeRequest request;
    request.memberId = *member;
    request.topic = pubsub::TopicKey(tenant.toString().toUtf8(), isPrivate.toBool(),
                                     topic.toString().toUtf8());
    request.legacy = legacy.toBool();
    request.claims = claims.toObject();
    for (const QJsonValue value : elements.toArray()) {
        const QJsonObject element = value.toObject();
        bool ok = false;
        const qint64 id = element.value(QLatin1String("id")).toString().toLongLong(&ok);
        if (!ok || !element.value(QLatin1String("params")).isObject()) {
            return Error{ QStringLiteral("subscribe: bad element") };
        }
        request.elements.append(
                SubscribeRequest::Element{ id, element.value(QLatin1String("params")).toObject() });
    }
    return request;
}

} // namespace

QByteArray encodeControl(const ControlMessage &message)
{
    QJsonObject object = std::visit(
            [](const auto &m) -> QJsonObject {
                using T = std::decay_t<decltype(m)>;
                if constexpr (std::is_same_v<T, StartStream>) {
                    return { { QStringLiteral("type"), QStringLiteral("start") },
                             { QStringLiteral("tenant"), QString::fromUtf8(m.tenantId) } };
                } else if constexpr (std::is_same_v<T, StartRefused>) {
                    return { { QStringLiteral("type"), QStringLiteral("start-refused") },
                             { QStringLiteral("tenant"), QString::fromUtf8(m.tenantId) },
                             { QStringLiteral("reason"), m.reason } };
                } else if constexpr (std::is_same_v<T, Subscribe>) {
                    QJsonObject subscribe = requestJson(m.request);
                    subscribe.insert(QStringLiteral("type"), QStringLiteral("subscribe"));
                    subscribe.insert(QStringLiteral("token"), idText(m.token));
                    subscribe.insert(QStringLiteral("incarnation"), idText(m.incarnation));
                    return subscribe;
                } else if constexpr (std::is_same_v<T, SubscribeAnswer>) {
                    return { { QStringLiteral("type"), QStringLiteral("answer") },
                             { QStringLiteral("token"), idText(m.token) },
                             { QStringLiteral("ok"), m.outcome.ok },
                             { QStringLiteral("message"), m.outcome.message },
                             { QStringLiteral("retry"), m.retry } };
                } else if constexpr (std::is_same_v<T, Unsubscribe>) {
                    return { { QStringLiteral("type"), QStringLiteral("unsubscribe") },
                             { QStringLiteral("tenant"), QString::fromUtf8(m.tenantId) },
                             { QStringLiteral("member"), idText(m.memberId) } };
                } else {
                    return { { QStringLiteral("type"), QStringLiteral("ack") },
                             { QStringLiteral("tenant"), QString::fromUtf8(m.tenantId) },
                             { QStringLiteral("log"), idText(m.logId) },
                             { QStringLiteral("seq"), idText(m.seq) },
                             { QStringLiteral("gap"), m.gap } };
                }
            },
            message);
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

Result<ControlMessage> decodeControl(QByteArrayView bytes)
{
    QJsonParseError error{};
    const QJsonDocument document =
            QJsonDocument::fromJson(QByteArray::fromRawData(bytes.data(), bytes.size()), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        return Error{ QStringLiteral("stream control frame is not a JSON object") };
    }
    const QJsonObject object = document.object();
    const QString type = object.value(QLatin1String("type")).toString();
    const QJsonValue tenant = object.value(QLatin1String("tenant"));
    const bool hasTenant = tenant.isString() && !tenant.toString().isEmpty();
    if (type == QLatin1String("start") && hasTenant) {
        return ControlMessage(StartStream{ tenant.toString().toUtf8() });
    }
    if (type == QLatin1String("start-refused") && hasTenant) {
        return ControlMessage(StartRefused{ tenant.toString().toUtf8(),
                                            object.value(QLatin1String("reason")).toString() });
    }
    if (type == QLatin1String("subscribe")) {
        const std::optional<quint64> token = idOf(object.value(QLatin1String("token")));
        const std::optional<quint64> incarnation = idOf(object.value(QLatin1String("incarnation")));
        Result<SubscribeRequest> request = requestOf(object);
        if (!request) {
            return Error{ request.error().message };
        }
        if (!token || !incarnation) {
            return Error{ QStringLiteral("subscribe: bad token or incarnation") };
        }
        return ControlMessage(Subscribe{ *token, std::move(request).value(), *incarnation });
    }
    if (type == QLatin1String("answer")) {
        const std::optional<quint64> token = idOf(object.value(QLatin1String("token")));
        const QJsonValue ok = object.value(QLatin1String("ok"));
        const QJsonValue message = object.value(QLatin1String("message"));
        const QJsonValue retry = object.value(QLatin1String("retry"));
        if (!token || !ok.isBool() || !message.isString() || !retry.isBool()) {
            return Error{ QStringLiteral("answer: missing or mistyped fields") };
        }
        return ControlMessage(SubscribeAnswer{
                *token, SubscribeOutcome{ ok.toBool(), message.toString() }, retry.toBool() });
    }
    if (type == QLatin1String("unsubscribe") && hasTenant) {
        const std::optional<quint64> member = idOf(object.value(QLatin1String("member")));
        if (!member) {
            return Error{ QStringLiteral("unsubscribe: bad member") };
        }
        return ControlMessage(Unsubscribe{ tenant.toString().toUtf8(), *member });
    }
    if (type == QLatin1String("ack") && hasTenant) {
        const std::optional<quint64> log = idOf(object.value(QLatin1String("log")));
        const std::optional<quint64> seq = idOf(object.value(QLatin1String("seq")));
        const QJsonValue gap = object.value(QLatin1String("gap"));
        if (!log || *log == 0 || !seq || !gap.isBool()) {
            return Error{ QStringLiteral("ack: missing or mistyped fields") };
        }
        return ControlMessage(DeliveryAck{ tenant.toString().toUtf8(), *log, *seq, gap.toBool() });
    }
    return Error{ QStringLiteral("unknown stream control frame") };
}

QByteArray encodeDelivery(const DeliveryStamp &stamp, const pubsub::TopicKey &topic,
                          QByteArrayView event, QByteArrayView payload,
                          const std::vector<quint64> &members)
{
    pubsub::detail::ByteWriter writer(64 + topic.tenant().size() + topic.subTopic().size()
                                      + event.size() + payload.size()
                                      + 8 * static_cast<qsizetype>(members.size()));
    writer.u8(DeliveryVersion);
    writer.u64(stamp.incarnation);
    writer.u64(stamp.logId);
    writer.u64(stamp.seq);
    writer.u64(stamp.floor);
    writer.u8(topic.isPrivate() ? PrivateFlag : 0);
    writer.bytes(topic.tenant());
    writer.bytes(topic.subTopic());
    writer.bytes(event);
    writer.bytes(payload);
    writer.u32(static_cast<quint32>(members.size()));
    for (const quint64 member : members) {
        writer.u64(member);
    }
    return writer.take();
}

Result<Delivery> decodeDelivery(QByteArrayView bytes)
{
    pubsub::detail::ByteReader reader(bytes);
    const std::optional<quint8> version = reader.u8();
    if (!version || *version != DeliveryVersion) {
        return Error{ QStringLiteral("delivery: unsupported version") };
    }
    DeliveryStamp stamp;
    stamp.incarnation = reader.u64().value_or(0);
    stamp.logId = reader.u64().value_or(0);
    stamp.seq = reader.u64().value_or(0);
    stamp.floor = reader.u64().value_or(0);
    const std::optional<quint8> flags = reader.u8();
    if (stamp.logId == 0 || stamp.floor == 0 || stamp.floor > stamp.seq) {
        return Error{ QStringLiteral("delivery: bad sequence stamp") };
    }
    if (!flags || (*flags & ~PrivateFlag) != 0) {
        return Error{ QStringLiteral("delivery: bad flags") };
    }
    const std::optional<QByteArray> tenant = reader.bytes();
    const std::optional<QByteArray> subTopic = reader.bytes();
    const std::optional<QByteArray> event = reader.bytes();
    const std::optional<QByteArray> payload = reader.bytes();
    const std::optional<quint32> count = reader.u32();
    if (!tenant || !subTopic || !event || !payload || !count) {
        return Error{ QStringLiteral("delivery: truncated") };
    }
    if (tenant->isEmpty()) {
        return Error{ QStringLiteral("delivery: empty tenant") };
    }
    // Checked before reserving, so a hostile count never allocates more than the frame holds.
    if (static_cast<quint64>(*count) * 8 != static_cast<quint64>(reader.remaining())) {
        return Error{ QStringLiteral("delivery: member count does not match the frame") };
    }
    Delivery delivery;
    delivery.stamp = stamp;
    delivery.topic = pubsub::TopicKey(*tenant, (*flags & PrivateFlag) != 0, *subTopic);
    delivery.event = *event;
    delivery.payload = *payload;
    delivery.members.reserve(*count);
    for (quint32 i = 0; i < *count; ++i) {
        const quint64 member = reader.u64().value_or(0);
        if (!delivery.members.empty() && member <= delivery.members.back()) {
            return Error{ QStringLiteral("delivery: member ids not ascending") };
        }
        delivery.members.push_back(member);
    }
    return delivery;
}

void restampFloor(QByteArray &frame, quint64 floor)
{
    Q_ASSERT(frame.size() >= FloorOffset + 8);
    for (int i = 0; i < 8; ++i) {
        frame[FloorOffset + i] = static_cast<char>((floor >> (56 - 8 * i)) & 0xffU);
    }
}

} // namespace rt::cdc::wire
