#include "shared/protocol/json_scan.h"

#include "shared/core/hex.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <string_view>

// Implementation notes. Every scanner works on [p, end) byte pointers and returns the pointer
// one past what it consumed, or nullptr on any grammar violation; nothing ever dereferences
// `end`. Containers are tracked on a fixed array of closing brackets (MaxDepth bytes on the C++
// stack), so hostile nesting costs neither recursion nor heap. Runs of plain ASCII inside
// strings, which is nearly all of a realtime frame, are skipped eight bytes at a time.
namespace rt::protocol::json {

namespace {

using Byte = unsigned char;
using namespace std::string_view_literals;

constexpr quint64 OnesWord = 0x0101010101010101ULL;
constexpr quint64 HighBitsWord = 0x8080808080808080ULL;

// Non-zero iff some byte of `word` is zero (the classic "haszero" bit trick). A borrow can
// falsely flag bytes above a zero byte, never below one, so the lowest flag is always genuine.
constexpr quint64 zeroByteMask(quint64 word)
{
    return (word - OnesWord) & ~word & HighBitsWord;
}

// Non-zero iff some byte of `word` is one that the string scanner must look at individually:
// a control character (< 0x20), '"', '\\' or any non-ASCII byte (>= 0x80).
constexpr quint64 specialStringByteMask(quint64 word)
{
    const quint64 belowSpace = (word - OnesWord * 0x20) & ~word & HighBitsWord;
    return belowSpace | zeroByteMask(word ^ (OnesWord * '"'))
            | zeroByteMask(word ^ (OnesWord * '\\')) | (word & HighBitsWord);
}

inline quint64 loadWord(const Byte *p)
{
    quint64 word;
    std::memcpy(&word, p, sizeof word);
    return word;
}

// Bytes that need no attention inside a string: printable ASCII other than '"' and '\\'.
constexpr std::array<bool, 256> makePlainStringByteTable()
{
    std::array<bool, 256> table{};
    for (int c = 0x20; c < 0x80; ++c) {
        table[static_cast<size_t>(c)] = c != '"' && c != '\\';
    }
    return table;
}
constexpr std::array<bool, 256> IsPlainStringByte = makePlainStringByteTable();

// Advances over bytes that need no attention inside a string, eight at a time. The lowest set
// bit of the mask always belongs to a genuinely special byte (the bit tricks can only misfire
// above a true hit), so on little-endian machines it locates the first special byte directly.
inline const Byte *skipPlainStringBytes(const Byte *p, const Byte *end)
{
    while (end - p >= 8) {
        const quint64 mask = specialStringByteMask(loadWord(p));
        if (mask != 0) {
            if constexpr (std::endian::native == std::endian::little) {
                return p + std::countr_zero(mask) / 8;
            }
            break;
        }
        p += 8;
    }
    while (p != end && IsPlainStringByte[*p]) {
        ++p;
    }
    return p;
}

constexpr bool isWhitespace(Byte c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

inline const Byte *skipWhitespace(const Byte *p, const Byte *end)
{
    while (p != end && isWhitespace(*p)) {
        ++p;
    }
    return p;
}

constexpr bool isDigit(Byte c)
{
    return c >= '0' && c <= '9';
}

constexpr bool isContinuation(Byte c)
{
    return (c & 0xC0) == 0x80;
}

// Length of the well-formed UTF-8 sequence that starts with the non-ASCII byte at p, or 0.
// Follows the RFC 3629 table: the second byte's range is narrowed for E0 (no overlongs),
// ED (no surrogates), F0 (no overlongs) and F4 (nothing above U+10FFFF).
int utf8SequenceLength(const Byte *p, const Byte *end)
{
    const Byte lead = *p;
    const qsizetype available = end - p;
    if (lead < 0xC2) { // a stray continuation byte, or C0/C1 (always overlong)
        return 0;
    }
    if (lead < 0xE0) {
        return available >= 2 && isContinuation(p[1]) ? 2 : 0;
    }
    if (lead < 0xF0) {
        if (available < 3) {
            return 0;
        }
        const Byte low = lead == 0xE0 ? 0xA0 : 0x80;
        const Byte high = lead == 0xED ? 0x9F : 0xBF;
        return p[1] >= low && p[1] <= high && isContinuation(p[2]) ? 3 : 0;
    }
    if (lead < 0xF5) {
        if (available < 4) {
            return 0;
        }
        const Byte low = lead == 0xF0 ? 0x90 : 0x80;
        const Byte high = lead == 0xF4 ? 0x8F : 0xBF;
        return p[1] >= low && p[1] <= high && isContinuation(p[2]) && isContinuation(p[3]) ? 4 : 0;
    }
    return 0;
}

// Reads the four hex digits at p (after "\u").
bool readHex4(const Byte *p, const Byte *end, char32_t &unit)
{
    if (end - p < 4) {
        return false;
    }
    char32_t value = 0;
    for (int i = 0; i < 4; ++i) {
        const int digit = hexDigitValue(static_cast<char>(p[i]));
        if (digit < 0) {
            return false;
        }
        value = (value << 4) | static_cast<char32_t>(digit);
    }
    unit = value;
    return true;
}

constexpr bool isHighSurrogate(char32_t unit)
{
    return unit >= 0xD800 && unit <= 0xDBFF;
}

constexpr bool isLowSurrogate(char32_t unit)
{
    return unit >= 0xDC00 && unit <= 0xDFFF;
}

// Scans the escape sequence whose backslash is just before p. On success returns the position
// after it and stores the code point it denotes. A high surrogate must be followed by an escaped
// low surrogate; lone surrogates are rejected because they have no UTF-8 form and would make
// the decoded string (and anything re-encoded from it) invalid.
const Byte *scanEscape(const Byte *p, const Byte *end, char32_t &codePoint)
{
    if (p == end) {
        return nullptr;
    }
    switch (*p) {
    case '"':
        codePoint = '"';
        return p + 1;
    case '\\':
        codePoint = '\\';
        return p + 1;
    case '/':
        codePoint = '/';
        return p + 1;
    case 'b':
        codePoint = '\b';
        return p + 1;
    case 'f':
        codePoint = '\f';
        return p + 1;
    case 'n':
        codePoint = '\n';
        return p + 1;
    case 'r':
        codePoint = '\r';
        return p + 1;
    case 't':
        codePoint = '\t';
        return p + 1;
    case 'u':
        break;
    default:
        return nullptr;
    }
    char32_t unit = 0;
    if (!readHex4(p + 1, end, unit)) {
        return nullptr;
    }
    p += 5;
    if (isLowSurrogate(unit)) {
        return nullptr;
    }
    if (!isHighSurrogate(unit)) {
        codePoint = unit;
        return p;
    }
    char32_t low = 0;
    if (end - p < 2 || p[0] != '\\' || p[1] != 'u' || !readHex4(p + 2, end, low)
        || !isLowSurrogate(low)) {
        return nullptr;
    }
    codePoint = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
    return p + 6;
}

// Scans a string whose opening quote is just before p; returns the position after the closing
// quote.
const Byte *scanString(const Byte *p, const Byte *end)
{
    for (;;) {
        p = skipPlainStringBytes(p, end);
        if (p == end) {
            return nullptr;
        }
        const Byte c = *p;
        if (c == '"') {
            return p + 1;
        }
        if (c == '\\') {
            char32_t ignored;
            p = scanEscape(p + 1, end, ignored);
            if (!p) {
                return nullptr;
            }
            continue;
        }
        if (c < 0x20) { // raw control characters must be escaped (RFC 8259 §7)
            return nullptr;
        }
        const int length = utf8SequenceLength(p, end);
        if (length == 0) {
            return nullptr;
        }
        p += length;
    }
}

inline const Byte *skipDigits(const Byte *p, const Byte *end)
{
    while (p != end && isDigit(*p)) {
        ++p;
    }
    return p;
}

// number = [ "-" ] ( "0" / digit1-9 *digit ) [ "." 1*digit ] [ ( "e" / "E" ) [ "+" / "-" ] 1*digit ]
const Byte *scanNumber(const Byte *p, const Byte *end)
{
    if (*p == '-') {
        ++p;
        if (p == end) {
            return nullptr;
        }
    }
    if (*p == '0') {
        ++p;
    } else if (*p >= '1' && *p <= '9') {
        p = skipDigits(p + 1, end);
    } else {
        return nullptr;
    }
    if (p != end && *p == '.') {
        ++p;
        if (p == end || !isDigit(*p)) {
            return nullptr;
        }
        p = skipDigits(p, end);
    }
    if (p != end && (*p == 'e' || *p == 'E')) {
        ++p;
        if (p != end && (*p == '+' || *p == '-')) {
            ++p;
        }
        if (p == end || !isDigit(*p)) {
            return nullptr;
        }
        p = skipDigits(p, end);
    }
    return p;
}

// `literal` is one of the keywords below; inlined, its size is a compile-time constant.
inline const Byte *scanLiteral(const Byte *p, const Byte *end, std::string_view literal)
{
    const auto length = static_cast<qsizetype>(literal.size());
    if (end - p < length || std::memcmp(p, literal.data(), literal.size()) != 0) {
        return nullptr;
    }
    return p + length;
}

// Scans a non-container value starting at p (p != end).
const Byte *scanScalar(const Byte *p, const Byte *end, Kind &kind)
{
    switch (*p) {
    case '"':
        kind = Kind::String;
        return scanString(p + 1, end);
    case 't':
        kind = Kind::True;
        return scanLiteral(p, end, "true"sv);
    case 'f':
        kind = Kind::False;
        return scanLiteral(p, end, "false"sv);
    case 'n':
        kind = Kind::Null;
        return scanLiteral(p, end, "null"sv);
    default:
        kind = Kind::Number;
        return scanNumber(p, end);
    }
}

// Scans `"key" :` plus the whitespace after it, starting at p (whitespace already skipped).
// Returns the position of the member's value, which is guaranteed not to be `end`.
const Byte *scanMemberKey(const Byte *p, const Byte *end)
{
    if (p == end || *p != '"') {
        return nullptr;
    }
    p = scanString(p + 1, end);
    if (!p) {
        return nullptr;
    }
    p = skipWhitespace(p, end);
    if (p == end || *p != ':') {
        return nullptr;
    }
    p = skipWhitespace(p + 1, end);
    return p == end ? nullptr : p;
}

// Called at p, where a value inside the `depth` open containers of scanValue just ended. Closes
// the containers that end here, then steps over the comma (and an object's next key) to the next
// element. Returns the position of that element, or the end of the outermost value once depth
// is 0.
inline const Byte *closeOrStepToNextElement(const Byte *p, const Byte *end, const Byte *closers,
                                            int &depth)
{
    while (depth > 0) {
        p = skipWhitespace(p, end);
        if (p == end) {
            return nullptr;
        }
        const Byte closer = closers[depth - 1];
        if (*p == closer) {
            ++p;
            --depth;
            continue;
        }
        if (*p != ',') {
            return nullptr;
        }
        p = skipWhitespace(p + 1, end);
        if (closer == '}') {
            p = scanMemberKey(p, end);
        }
        if (!p || p == end) {
            return nullptr;
        }
        return p;
    }
    return p;
}

// Scans one complete value starting at p (whitespace already skipped). At most `depthBudget`
// containers may be open at once inside it. Non-recursive: the open containers live in
// `closers`, innermost last.
const Byte *scanValue(const Byte *p, const Byte *end, int depthBudget, Kind &kind)
{
    if (p == end) {
        return nullptr;
    }
    if (*p != '{' && *p != '[') {
        return scanScalar(p, end, kind);
    }
    kind = *p == '{' ? Kind::Object : Kind::Array;

    // Filled up to `depth` and never read above it, so zeroing 256 bytes per container is waste.
    std::array<Byte, MaxDepth> closers; // NOLINT(cppcoreguidelines-pro-type-member-init): see above
    int depth = 0;
    depthBudget = std::min(depthBudget, MaxDepth);
    for (;;) {
        // Here p points at the first byte of a value (never whitespace, never end).
        const Byte c = *p;
        if (c == '{' || c == '[') {
            if (depth >= depthBudget) {
                return nullptr;
            }
            const Byte closer = c == '{' ? '}' : ']';
            closers[depth++] = closer;
            p = skipWhitespace(p + 1, end);
            if (p == end) {
                return nullptr;
            }
            if (*p != closer) {
                if (closer == '}') {
                    p = scanMemberKey(p, end);
                    if (!p) {
                        return nullptr;
                    }
                }
                continue;
            }
            ++p; // an empty container is a complete value
            --depth;
        } else {
            Kind ignored;
            p = scanScalar(p, end, ignored);
            if (!p) {
                return nullptr;
            }
        }
        // A value just ended: close finished containers, or step to the next element.
        p = closeOrStepToNextElement(p, end, closers.data(), depth);
        if (!p || depth == 0) {
            return p;
        }
    }
}

inline const Byte *bytesOf(QByteArrayView text)
{
    return reinterpret_cast<const Byte *>(text.data());
}

// Walks the top-level elements of an array, calling sink(Span) for each; validates everything.
template <typename Sink>
bool scanArrayElements(QByteArrayView text, Sink &&sink)
{
    const Byte *const begin = bytesOf(text);
    const Byte *const end = begin + text.size();
    const Byte *p = skipWhitespace(begin, end);
    if (p == end || *p != '[') {
        return false;
    }
    p = skipWhitespace(p + 1, end);
    if (p == end) {
        return false;
    }
    if (*p != ']') {
        for (;;) {
            Kind kind = Kind::Null;
            const Byte *const valueEnd = scanValue(p, end, MaxDepth - 1, kind);
            if (!valueEnd) {
                return false;
            }
            sink(Span{ p - begin, valueEnd - begin, kind });
            p = skipWhitespace(valueEnd, end);
            if (p == end) {
                return false;
            }
            if (*p == ']') {
                break;
            }
            if (*p != ',') {
                return false;
            }
            p = skipWhitespace(p + 1, end);
        }
    }
    return skipWhitespace(p + 1, end) == end;
}

// Walks the top-level members of an object, calling sink(Member) for each; validates everything.
template <typename Sink>
bool scanObjectMembers(QByteArrayView text, Sink &&sink)
{
    const Byte *const begin = bytesOf(text);
    const Byte *const end = begin + text.size();
    const Byte *p = skipWhitespace(begin, end);
    if (p == end || *p != '{') {
        return false;
    }
    p = skipWhitespace(p + 1, end);
    if (p == end) {
        return false;
    }
    if (*p != '}') {
        for (;;) {
            const Byte *const keyBegin = p;
            if (*p != '"') {
                return false;
            }
            const Byte *const keyEnd = scanString(p + 1, end);
            if (!keyEnd) {
                return false;
            }
            p = skipWhitespace(keyEnd, end);
            if (p == end || *p != ':') {
                return false;
            }
            p = skipWhitespace(p + 1, end);
            Kind kind = Kind::Null;
            const Byte *const valueEnd = scanValue(p, end, MaxDepth - 1, kind);
            if (!valueEnd) {
                return false;
            }
            sink(Member{ Span{ keyBegin - begin, keyEnd - begin, Kind::String },
                         Span{ p - begin, valueEnd - begin, kind } });
            p = skipWhitespace(valueEnd, end);
            if (p == end) {
                return false;
            }
            if (*p == '}') {
                break;
            }
            if (*p != ',') {
                return false;
            }
            p = skipWhitespace(p + 1, end);
            if (p == end) {
                return false;
            }
        }
    }
    return skipWhitespace(p + 1, end) == end;
}

// Appends the UTF-8 form of a code point that scanEscape produced (never a surrogate).
inline char *writeUtf8(char *out, char32_t codePoint)
{
    if (codePoint < 0x80) {
        *out++ = static_cast<char>(codePoint);
    } else if (codePoint < 0x800) {
        *out++ = static_cast<char>(0xC0 | (codePoint >> 6));
        *out++ = static_cast<char>(0x80 | (codePoint & 0x3F));
    } else if (codePoint < 0x10000) {
        *out++ = static_cast<char>(0xE0 | (codePoint >> 12));
        *out++ = static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        *out++ = static_cast<char>(0x80 | (codePoint & 0x3F));
    } else {
        *out++ = static_cast<char>(0xF0 | (codePoint >> 18));
        *out++ = static_cast<char>(0x80 | ((codePoint >> 12) & 0x3F));
        *out++ = static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        *out++ = static_cast<char>(0x80 | (codePoint & 0x3F));
    }
    return out;
}

// Decodes the string body [p, end) where end is the closing quote's position. Writes at most
// end - p bytes: every escape is at least as long as its UTF-8 form ("\uXXXX" 6 -> at most 3,
// a 12-byte pair -> 4). Returns the write position, or nullptr if the body is invalid.
char *decodeStringBody(const Byte *p, const Byte *end, char *out)
{
    for (;;) {
        const Byte *const runEnd = skipPlainStringBytes(p, end);
        if (runEnd != p) {
            std::memcpy(out, p, static_cast<size_t>(runEnd - p));
            out += runEnd - p;
            p = runEnd;
        }
        if (p == end) {
            return out;
        }
        const Byte c = *p;
        if (c == '\\') {
            char32_t codePoint = 0;
            p = scanEscape(p + 1, end, codePoint);
            if (!p) {
                return nullptr;
            }
            out = writeUtf8(out, codePoint);
            continue;
        }
        if (c < 0x20 || c == '"') { // an unescaped quote before `end` means the literal ended early
            return nullptr;
        }
        const int length = utf8SequenceLength(p, end);
        if (length == 0) {
            return nullptr;
        }
        std::memcpy(out, p, static_cast<size_t>(length));
        out += length;
        p += length;
    }
}

} // namespace

bool isValid(QByteArrayView text)
{
    const Byte *const begin = bytesOf(text);
    const Byte *const end = begin + text.size();
    Kind kind = Kind::Null;
    const Byte *const valueEnd = scanValue(skipWhitespace(begin, end), end, MaxDepth, kind);
    return valueEnd && skipWhitespace(valueEnd, end) == end;
}

bool splitArray(QByteArrayView text, QList<Span> &elements)
{
    elements.clear(); // Qt 6 keeps the capacity, so a caller may reuse one list per connection
    if (elements.capacity() < 8) {
        elements.reserve(8); // a Phoenix V2 frame has five
    }
    if (scanArrayElements(text, [&elements](const Span &span) { elements.append(span); })) {
        return true;
    }
    elements.clear();
    return false;
}

bool splitArray(QByteArrayView text, Span *elements, qsizetype capacity, qsizetype &count)
{
    qsizetype seen = 0;
    const bool ok = scanArrayElements(text, [&](const Span &span) {
        if (seen < capacity) {
            elements[seen] = span;
        }
        ++seen;
    });
    count = ok ? seen : 0;
    return ok;
}

bool splitObject(QByteArrayView text, QList<Member> &members)
{
    members.clear();
    if (members.capacity() < 8) {
        members.reserve(8); // a Phoenix V1 frame has four or five
    }
    if (scanObjectMembers(text, [&members](const Member &member) { members.append(member); })) {
        return true;
    }
    members.clear();
    return false;
}

bool splitObject(QByteArrayView text, Member *members, qsizetype capacity, qsizetype &count)
{
    qsizetype seen = 0;
    const bool ok = scanObjectMembers(text, [&](const Member &member) {
        if (seen < capacity) {
            members[seen] = member;
        }
        ++seen;
    });
    count = ok ? seen : 0;
    return ok;
}

bool decodeString(QByteArrayView literal, QByteArray &out)
{
    const qsizetype size = literal.size();
    if (size < 2 || literal.front() != '"' || literal.back() != '"') {
        out.clear();
        return false;
    }
    if (size == 2) {
        out.clear(); // also avoids data() allocating for an empty result
        return true;
    }
    const Byte *const body = bytesOf(literal) + 1;
    const Byte *const bodyEnd = bytesOf(literal) + size - 1;
    out.resize(size - 2); // the decoded form is never longer than the body
    char *const written = decodeStringBody(body, bodyEnd, out.data());
    if (!written) {
        out.clear();
        return false;
    }
    out.truncate(written - out.data());
    return true;
}

bool isValidUtf8(QByteArrayView bytes)
{
    const Byte *p = bytesOf(bytes);
    const Byte *const end = p + bytes.size();
    for (;;) {
        while (end - p >= 8 && (loadWord(p) & HighBitsWord) == 0) {
            p += 8;
        }
        while (p != end && *p < 0x80) {
            ++p;
        }
        if (p == end) {
            return true;
        }
        const int length = utf8SequenceLength(p, end);
        if (length == 0) {
            return false;
        }
        p += length;
    }
}

} // namespace rt::protocol::json
