#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <optional>

// Base64url (RFC 4648 §5) as JWTs and JWKs use it. Pure functions; callable from any thread.
namespace rt::auth {

// Decodes base64url text. Padding is optional (JWTs omit it, some JWKs keep it), but when present
// it must be correct. Any character outside the url-safe alphabet (including '+', '/', whitespace)
// makes the input invalid, and so does a length of 1 mod 4. Like the reference server, unused
// low bits of the last character are not required to be zero.
std::optional<QByteArray> decodeBase64Url(QByteArrayView text);

// Encodes without padding, the form used in compact JWS.
QByteArray encodeBase64Url(QByteArrayView bytes);

} // namespace rt::auth
