#pragma once

#include <QByteArray>

namespace rt::protocol {

// Serializer version negotiated with the `vsn` query parameter of the socket URL.
enum class Vsn : quint8 {
    V1, // "1.0.0": JSON objects, text frames only
    V2, // "2.0.0": JSON arrays, plus binary user-broadcast frames (kind 3 in, kind 4 out)
};

// One decoded client->server Phoenix message.
//
// Refs are kept as their exact JSON source text (`"6"`, `null`, `7`) so that replies can echo
// them byte-for-byte: realtime-js compares refs with `===` and drops replies whose ref changed
// type. An absent join_ref (v1 heartbeat) is stored as `null`.
struct InboundMessage
{
    QByteArray joinRef = QByteArrayLiteral("null"); // raw JSON token
    QByteArray ref = QByteArrayLiteral("null"); // raw JSON token
    QByteArray topic; // decoded UTF-8 string
    QByteArray event; // decoded UTF-8 string

    // Text frames: the exact JSON source text of the payload value (validated JSON).
    // Binary kind 3: the user payload bytes (JSON text when payloadIsJson, raw bytes otherwise).
    QByteArray payload;

    // Binary kind 3 ("user broadcast push", v2 only). event is then "broadcast".
    bool isUserBroadcast = false;
    QByteArray userEvent; // the user's event name
    QByteArray metadata; // JSON object text or empty; the server ignores it (upstream does too)
    bool payloadIsJson = true; // encoding byte: 1 = JSON, 0 = raw
};

} // namespace rt::protocol
