#pragma once

#include <QByteArrayView>
#include <QList>

// A validating JSON scanner that finds the byte spans of top-level members without building a
// tree, so that payloads can be forwarded byte-for-byte and frames decoded without re-encoding.
// Strict RFC 8259 grammar, UTF-8 validated inside strings, nesting depth limited; never recurses
// on the C++ stack and never reads past the input.
namespace rt::protocol::json {

constexpr int MaxDepth = 256;

enum class Kind : quint8 { Object, Array, String, Number, True, False, Null };

struct Span
{
    qsizetype begin = 0; // offset of the first byte of the value
    qsizetype end = 0; // one past the last byte
    Kind kind = Kind::Null;
};

// Validates that `text` is exactly one JSON value (surrounding whitespace allowed).
bool isValid(QByteArrayView text);

// If `text` is a valid JSON array, fills `elements` with the spans of its top-level elements.
bool splitArray(QByteArrayView text, QList<Span> &elements);

struct Member
{
    Span key; // span of the key string literal, quotes included
    Span value;
};
// If `text` is a valid JSON object, fills `members` with its top-level members in source order
// (duplicate keys are kept; callers use the last, like most JSON decoders).
bool splitObject(QByteArrayView text, QList<Member> &members);

// Decodes a JSON string literal (quotes included) to UTF-8. Returns false on invalid input.
bool decodeString(QByteArrayView literal, QByteArray &out);

// Allocation-free variants for hot paths that only need a bounded number of members: the spans of
// the first `capacity` elements/members are stored in the caller's buffer and `count` receives
// the total number. The whole value is validated exactly as by the QList overloads.
bool splitArray(QByteArrayView text, Span *elements, qsizetype capacity, qsizetype &count);
bool splitObject(QByteArrayView text, Member *members, qsizetype capacity, qsizetype &count);

// Whether `bytes` is well-formed UTF-8 (RFC 3629: no overlong forms, no UTF-16 surrogates, nothing
// above U+10FFFF, no truncated sequences). Used for strings that arrive outside JSON (binary frame
// headers) before they are echoed in text frames.
bool isValidUtf8(QByteArrayView bytes);

} // namespace rt::protocol::json
