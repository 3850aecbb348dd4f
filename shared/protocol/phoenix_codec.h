#pragma once

#include "shared/core/result.h"
#include "shared/protocol/phoenix_message.h"

#include <QByteArray>
#include <QByteArrayView>

#include <optional>

// Pure encoders/decoders for the Phoenix socket protocol as spoken by @supabase/realtime-js and
// Supabase Realtime (spec/server-protocol.md §2, spec/client-protocol.md §2-3). No I/O, no Qt event
// loop; every function is safe to call from any thread. Decoders never crash or throw on any
// input: they return an Error, and the caller drops the frame and keeps the connection.
namespace rt::protocol {

// `vsn` query value -> serializer. `present == false` (no vsn parameter) means 1.0.0. Values
// matching "~> 1.0.0" (1.0.x) are V1, "~> 2.0.0" (2.0.x) are V2; anything else (unparsable or
// another version) is nullopt, which the gateway answers with HTTP 403 and an empty body.
std::optional<Vsn> parseVsn(QByteArrayView value, bool present);

// Decodes a text frame: a JSON object {topic, event, payload, ref[, join_ref]} for V1 (all four
// keys required), a JSON array [join_ref, ref, topic, event, payload, ...] for V2 (extra elements
// ignored). topic and event must be strings; refs may be any JSON scalar and are kept raw.
// The payload may be any JSON value; it is kept as its exact source text.
Result<InboundMessage> decodeText(QByteArrayView frame, Vsn vsn);

// Decodes a binary frame (V2 only). Kind 3 (user broadcast push) is decoded into an
// InboundMessage with isUserBroadcast = true, event "broadcast"; join_ref and ref become JSON
// string tokens. Kind 0 (push) is decoded with the payload as opaque bytes. Other kinds, short or
// inconsistent frames, and JSON-encoded (encoding 1) payloads that are not valid JSON are errors.
Result<InboundMessage> decodeBinary(QByteArrayView frame);

// ---- Encoders (server -> client). Inputs that are JSON must already be valid JSON text. ----

// A reply: V2 [join_ref, ref, topic, "phx_reply", {"status":status,"response":response}],
// V1 {"topic":...,"event":"phx_reply","payload":{...},"ref":ref} (V1 has no join_ref key).
// joinRefJson/refJson are raw JSON tokens (typically echoed from the InboundMessage);
// responseJson is any JSON value text (an object, or the string "payload_size_exceeded").
QByteArray encodeReply(Vsn vsn, QByteArrayView joinRefJson, QByteArrayView refJson,
                       QByteArrayView topic, QByteArrayView status, QByteArrayView responseJson);

// A push/broadcast: V2 [join_ref, ref, topic, event, payload], V1 {"topic","event","payload","ref"}.
// Fastlane frames pass "null" for both refs; channel pushes pass the channel's join_ref.
QByteArray encodePush(Vsn vsn, QByteArrayView joinRefJson, QByteArrayView refJson,
                      QByteArrayView topic, QByteArrayView event, QByteArrayView payloadJson);

// Binary kind 4 "user broadcast" (V2 only). Fails (nullopt) if topic, userEvent or metadata is
// longer than 255 bytes. metadataJson may be empty (no metadata).
std::optional<QByteArray> encodeUserBroadcast(QByteArrayView topic, QByteArrayView userEvent,
                                              QByteArrayView metadataJson, bool payloadIsJson,
                                              QByteArrayView payload);

// The JSON object a V1 socket receives for a JSON-encoded user broadcast:
// {"event":<userEvent>[,"meta":<metadataJson>],"payload":<payloadJson>,"type":"broadcast"}
// ("meta" only when metadataJson is non-empty; keys in upstream's order, which is sorted).
QByteArray userBroadcastAsJsonPayload(QByteArrayView userEvent, QByteArrayView payloadJson,
                                      QByteArrayView metadataJson);

// Appends `text` to `out` as a JSON string literal (quotes and escapes).
void appendJsonString(QByteArray &out, QByteArrayView text);
// Convenience: `text` as a JSON string literal.
QByteArray jsonString(QByteArrayView text);

} // namespace rt::protocol
