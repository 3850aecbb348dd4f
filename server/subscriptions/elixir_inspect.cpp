#include "server/subscriptions/elixir_inspect.h"

#include "server/subscriptions/inspect_algebra.h"
#include "shared/core/hex.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QVariant>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

namespace rt::subscriptions {

struct ElixirTerm::Data
{
    Kind kind = Kind::Atom;
    QByteArray text; // atom name or binary bytes
    qint64 integer = 0;
    double floating = 0;
    QList<ElixirTerm> items; // list / tuple elements; map: key, value, key, value...
};

ElixirTerm ElixirTerm::boolean(bool value)
{
    return atom(value ? QByteArrayLiteral("true") : QByteArrayLiteral("false"));
}

ElixirTerm ElixirTerm::atom(const QByteArray &name)
{
    auto data = std::make_shared<Data>();
    data->kind = Kind::Atom;
    data->text = name;
    return ElixirTerm(std::move(data));
}

ElixirTerm ElixirTerm::integer(qint64 value)
{
    auto data = std::make_shared<Data>();
    data->kind = Kind::Integer;
    data->integer = value;
    return ElixirTerm(std::move(data));
}

ElixirTerm ElixirTerm::floating(double value)
{
    auto data = std::make_shared<Data>();
    data->kind = Kind::Float;
    data->floating = value;
    return ElixirTerm(std::move(data));
}

ElixirTerm ElixirTerm::binary(const QByteArray &bytes)
{
    auto data = std::make_shared<Data>();
    data->kind = Kind::Binary;
    data->text = bytes;
    return ElixirTerm(std::move(data));
}

ElixirTerm ElixirTerm::list(QList<ElixirTerm> items)
{
    auto data = std::make_shared<Data>();
    data->kind = Kind::List;
    data->items = std::move(items);
    return ElixirTerm(std::move(data));
}

ElixirTerm ElixirTerm::tuple(QList<ElixirTerm> items)
{
    auto data = std::make_shared<Data>();
    data->kind = Kind::Tuple;
    data->items = std::move(items);
    return ElixirTerm(std::move(data));
}

namespace {

// Erlang term order restricted to what maps built here hold as keys: numbers < atoms < tuples <
// maps < lists < binaries; binaries bytewise (a prefix sorts first).
int kindRank(ElixirTerm::Kind kind)
{
    switch (kind) {
    case ElixirTerm::Kind::Integer:
    case ElixirTerm::Kind::Float:
        return 0;
    case ElixirTerm::Kind::Atom:
        return 1;
    case ElixirTerm::Kind::Tuple:
        return 2;
    case ElixirTerm::Kind::Map:
        return 3;
    case ElixirTerm::Kind::List:
        return 4;
    case ElixirTerm::Kind::Binary:
        return 5;
    }
    return 6;
}

} // namespace

class Inspector
{
public:
    static const ElixirTerm::Data &data(const ElixirTerm &term) { return *term.m_data; }

    static bool keyLess(const ElixirTerm &a, const ElixirTerm &b)
    {
        const auto &da = data(a);
        const auto &db = data(b);
        const int ra = kindRank(da.kind);
        const int rb = kindRank(db.kind);
        if (ra != rb) {
            return ra < rb;
        }
        switch (da.kind) {
        case ElixirTerm::Kind::Integer:
        case ElixirTerm::Kind::Float: {
            const double x =
                    da.kind == ElixirTerm::Kind::Integer ? double(da.integer) : da.floating;
            const double y =
                    db.kind == ElixirTerm::Kind::Integer ? double(db.integer) : db.floating;
            return x < y;
        }
        case ElixirTerm::Kind::Atom:
        case ElixirTerm::Kind::Binary:
            return da.text < db.text; // QByteArray compares bytewise, prefix first
        default:
            return false; // containers as keys do not occur (JSON keys are strings)
        }
    }
};

ElixirTerm ElixirTerm::map(QList<std::pair<ElixirTerm, ElixirTerm>> entries)
{
    std::stable_sort(entries.begin(), entries.end(), [](const auto &a, const auto &b) {
        return Inspector::keyLess(a.first, b.first);
    });
    auto data = std::make_shared<Data>();
    data->kind = Kind::Map;
    data->items.reserve(entries.size() * 2);
    for (auto &entry : entries) {
        data->items.append(std::move(entry.first));
        data->items.append(std::move(entry.second));
    }
    return ElixirTerm(std::move(data));
}

ElixirTerm::Kind ElixirTerm::kind() const
{
    return m_data->kind;
}

ElixirTerm ElixirTerm::fromJson(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        return nil();
    case QJsonValue::Bool:
        return boolean(value.toBool());
    case QJsonValue::Double: {
        // QJsonValue keeps integers (parsed without loss) apart from doubles; toVariant tells.
        const QVariant variant = value.toVariant();
        if (variant.typeId() == QMetaType::LongLong) {
            return integer(variant.toLongLong());
        }
        return floating(value.toDouble());
    }
    case QJsonValue::String:
        return string(value.toString());
    case QJsonValue::Array: {
        QList<ElixirTerm> items;
        const QJsonArray array = value.toArray();
        items.reserve(array.size());
        for (const QJsonValue item : array) {
            items.append(fromJson(item));
        }
        return list(std::move(items));
    }
    case QJsonValue::Object: {
        QList<std::pair<ElixirTerm, ElixirTerm>> entries;
        const QJsonObject object = value.toObject();
        entries.reserve(object.size());
        for (auto it = object.begin(); it != object.end(); ++it) {
            entries.append({ string(it.key()), fromJson(it.value()) });
        }
        return map(std::move(entries));
    }
    }
    return nil();
}

namespace {

using algebra::concat;
using algebra::concat3;
using algebra::DocPtr;
using algebra::format;
using algebra::glue;
using algebra::group;
using algebra::Infinite;
using algebra::isSimple;
using algebra::nest;
using algebra::text;

// ---- Term → document (Inspect protocol implementations of Elixir 1.19).

// Decodes one UTF-8 code point at `i`; returns its length, or 0 when the bytes are not UTF-8
// (Erlang's <<c::utf8>> rejects overlongs, surrogates and values above 0x10FFFF).
int decodeUtf8(const QByteArray &bytes, qsizetype i, char32_t *codePoint)
{
    const auto byte = [&](qsizetype at) { return static_cast<unsigned char>(bytes.at(at)); };
    const unsigned char b0 = byte(i);
    const qsizetype left = bytes.size() - i;
    if (b0 < 0x80) {
        *codePoint = b0;
        return 1;
    }
    int length = 0;
    char32_t value = 0;
    if ((b0 & 0xE0) == 0xC0) {
        length = 2;
        value = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
        length = 3;
        value = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
        length = 4;
        value = b0 & 0x07;
    } else {
        return 0;
    }
    if (left < length) {
        return 0;
    }
    for (int k = 1; k < length; ++k) {
        const unsigned char b = byte(i + k);
        if ((b & 0xC0) != 0x80) {
            return 0;
        }
        value = (value << 6) | (b & 0x3F);
    }
    const char32_t minimum = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
    if (value < minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
        return 0;
    }
    *codePoint = value;
    return length;
}

// String.printable?(bytes, limit)
bool isPrintable(const QByteArray &bytes, int limit)
{
    qsizetype i = 0;
    int counted = 0;
    while (i < bytes.size()) {
        if (counted == limit) {
            return true;
        }
        const auto b = static_cast<unsigned char>(bytes.at(i));
        if ((b >= 0x20 && b <= 0x7E) || b == '\n' || b == '\r' || b == '\t' || b == '\v'
            || b == '\b' || b == '\f' || b == 0x1B || b == 0x7F || b == 0x07) {
            ++i;
        } else {
            char32_t cp = 0;
            const int length = decodeUtf8(bytes, i, &cp);
            if (length == 0
                || !((cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD)
                     || (cp >= 0x10000 && cp <= 0x10FFFF))) {
                return false;
            }
            i += length;
        }
        ++counted;
    }
    return true;
}

void appendHex4(QByteArray *out, char32_t cp)
{
    for (int shift = 12; shift >= 0; shift -= 4) {
        out->append(upperHexDigit(int(cp >> shift)));
    }
}

// Code.Identifier.escape(bytes, ?", limit): returns true when everything was escaped (otherwise
// the caller appends ` <> ...`).
// Inspect's short escapes ("\n", "\e", ...), or null for a code point without one.
const char *shortEscape(char32_t cp)
{
    switch (cp) {
    case 0x07:
        return "\\a";
    case 0x08:
        return "\\b";
    case 0x7F:
        return "\\d";
    case 0x1B:
        return "\\e";
    case 0x0C:
        return "\\f";
    case 0x0A:
        return "\\n";
    case 0x0D:
        return "\\r";
    case 0x09:
        return "\\t";
    case 0x0B:
        return "\\v";
    case '\\':
        return "\\\\";
    case 0:
        return "\\0";
    default:
        return nullptr;
    }
}

// Code points Elixir escapes as \uXXXX although printable: BOM, bidi controls, invisible
// separators and spaces that could confuse a reader.
bool isConfusing(char32_t cp)
{
    return cp == 0xFEFF || (cp >= 0x2061 && cp <= 0x2064) || cp == 0x061C || cp == 0x200E
            || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)
            || (cp >= 0xFFF9 && cp <= 0xFFFC) || cp == 0x200C || cp == 0x200D || cp == 0x034F
            || cp == 0x00A0 || cp == 0x200B || cp == 0x2060 || cp == 0x2028 || cp == 0x2029
            || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x205F;
}

// One decoded code point (its `length` UTF-8 bytes end at `end`) as Inspect writes it.
void appendCodePoint(char32_t cp, const char *end, int length, QByteArray *out)
{
    if (const char *escape = shortEscape(cp)) {
        out->append(escape);
    } else if (isConfusing(cp)) {
        out->append("\\u");
        appendHex4(out, cp);
    } else if ((cp >= 0x20 && cp <= 0x7E) || (cp >= 0xA0 && cp <= 0xD7FF)
               || (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF)) {
        out->append(end - length, length);
    } else if (cp < 0x100) {
        out->append("\\x");
        out->append(upperHexDigit(int(cp >> 4)));
        out->append(upperHexDigit(int(cp)));
    } else if (cp < 0x10000) {
        out->append("\\x{");
        appendHex4(out, cp);
        out->append('}');
    } else {
        out->append("\\x{");
        for (int shift = 20; shift >= 0; shift -= 4) {
            out->append(upperHexDigit(int(cp >> shift)));
        }
        out->append('}');
    }
}

bool escapeQuoted(const QByteArray &bytes, int limit, QByteArray *out)
{
    qsizetype i = 0;
    int count = 0;
    while (i < bytes.size()) {
        if (count == limit) {
            return false;
        }
        ++count;
        const char c = bytes.at(i);
        if (c == '"') {
            out->append("\\\"");
            ++i;
            continue;
        }
        if (c == '#' && i + 1 < bytes.size() && bytes.at(i + 1) == '{') {
            out->append("\\#{");
            i += 2;
            continue;
        }
        char32_t cp = 0;
        const int length = decodeUtf8(bytes, i, &cp);
        if (length == 0) {
            const auto b = static_cast<unsigned char>(c);
            out->append("\\x");
            out->append(upperHexDigit(b >> 4));
            out->append(upperHexDigit(b));
            ++i;
            continue;
        }
        i += length;
        appendCodePoint(cp, bytes.constData() + i, length, out);
    }
    return true;
}

// :erlang.float_to_list(F, [short]) (io_lib_format:fwrite_g/1 with its insert_decimal rules).
QByteArray erlangShortFloat(double value)
{
    if (value == 0) {
        return std::signbit(value) ? QByteArrayLiteral("-0.0") : QByteArrayLiteral("0.0");
    }
    if (!std::isfinite(value)) {
        return QByteArrayLiteral("nan"); // JSON cannot carry these; never printed in practice
    }
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, std::fabs(value),
                                      std::chars_format::scientific);
    const QByteArray scientific(buffer, int(result.ptr - buffer));
    const qsizetype e = scientific.indexOf('e');
    QByteArray digits = scientific.left(e);
    digits.replace(".", "");
    const int sciExponent = scientific.mid(e + 1).toInt();
    const int length = int(digits.size());
    const int place = sciExponent - (length - 1); // value = digits × 10^place
    const QByteArray expText = QByteArray::number(sciExponent);
    const int expCost = int(expText.size()) + 2;
    const auto insertExp = [&]() -> QByteArray {
        if (length == 1) {
            return digits + ".0e" + expText;
        }
        return digits.left(1) + '.' + digits.mid(1) + 'e' + expText;
    };
    QByteArray out;
    if (place < 0) {
        if (sciExponent >= 0) {
            out = QByteArray(digits.left(length + place) + '.' + digits.mid(length + place));
        } else if (2 - place - length <= expCost) {
            out = QByteArray("0." + QByteArray(-place - length, '0') + digits);
        } else {
            out = insertExp();
        }
    } else {
        const int dot = length == 1 ? 1 : 0;
        if (expCost + dot >= place + 2 && std::fabs(value) < 9007199254740992.0) {
            out = QByteArray(digits + QByteArray(place, '0') + ".0");
        } else {
            out = insertExp();
        }
    }
    if (value < 0) {
        out.prepend('-');
    }
    return out;
}

class DocBuilder
{
public:
    explicit DocBuilder(const InspectOptions &options) : m_options(options) { }

    // to_doc_with_opts: returns the document; `limit` is updated the way 1.19 threads it.
    DocPtr toDoc(const ElixirTerm &term, int *limit) const
    {
        const auto &data = Inspector::data(term);
        switch (data.kind) {
        case ElixirTerm::Kind::Atom:
            return text(data.text);
        case ElixirTerm::Kind::Integer:
            return text(QByteArray::number(data.integer));
        case ElixirTerm::Kind::Float: {
            const double value = data.floating;
            const double magnitude = std::fabs(value);
            if (magnitude >= 1.0 && magnitude < 1.0e16 && std::trunc(value) == value) {
                return text(QByteArray::number(qint64(value)) + ".0");
            }
            return text(erlangShortFloat(value));
        }
        case ElixirTerm::Kind::Binary:
            return binaryDoc(data.text, limit);
        case ElixirTerm::Kind::List:
            return listDoc(data.items, limit);
        case ElixirTerm::Kind::Tuple:
            return containerDoc(text("{"), data.items, 1, text("}"), Break::Flex, limit,
                                [this](const QList<ElixirTerm> &items, qsizetype at, int *l) {
                                    return toDoc(items.at(at), l);
                                });
        case ElixirTerm::Kind::Map:
            return containerDoc(text("%{"), data.items, 2, text("}"), Break::Strict, limit,
                                [this](const QList<ElixirTerm> &items, qsizetype at, int *l) {
                                    const DocPtr key = toDoc(items.at(at), l);
                                    const DocPtr value = toDoc(items.at(at + 1), l);
                                    return concat3(key, text(" => "), value);
                                });
        }
        return text("nil");
    }

private:
    enum class Break { Maybe, Flex, Strict };

    DocPtr binaryDoc(const QByteArray &bytes, int *limit) const
    {
        if (isPrintable(bytes, m_options.printableLimit)) {
            QByteArray out("\"");
            const bool complete = escapeQuoted(bytes, m_options.printableLimit, &out);
            out.append('"');
            if (!complete) {
                out.append(" <> ...");
            }
            return text(out);
        }
        if (bytes.isEmpty()) {
            return text("<<>>");
        }
        // each_bit: bytes separated by flex breaks, "..." once the limit is used up.
        const int start = *limit;
        DocPtr inner;
        const qsizetype shown = std::min<qsizetype>(bytes.size(), std::max(start, 0));
        if (shown < bytes.size()) {
            inner = text("...");
        }
        for (qsizetype i = shown - 1; i >= 0; --i) {
            const DocPtr number = text(QByteArray::number(static_cast<unsigned char>(bytes.at(i))));
            inner = inner ? glue(concat(number, text(",")), " ", inner, true) : number;
        }
        *limit = int(std::max<qsizetype>(0, start - bytes.size()));
        return group(concat3(text("<<"), nest(inner, 2), text(">>")));
    }

    static bool isAsciiPrintableCharlist(const QList<ElixirTerm> &items, int printableLimit)
    {
        int counted = 0;
        for (const ElixirTerm &item : items) {
            if (counted == printableLimit) {
                return true;
            }
            const auto &data = Inspector::data(item);
            if (data.kind != ElixirTerm::Kind::Integer) {
                return false;
            }
            const qint64 c = data.integer;
            if (!((c >= 7 && c <= 13) || c == 27 || (c >= 32 && c <= 126))) {
                return false;
            }
            ++counted;
        }
        return true;
    }

    DocPtr listDoc(const QList<ElixirTerm> &items, int *limit) const
    {
        if (items.isEmpty()) {
            return text("[]");
        }
        if (isAsciiPrintableCharlist(items, m_options.printableLimit)) {
            QByteArray chars;
            for (const ElixirTerm &item : items) {
                chars.append(char(Inspector::data(item).integer));
            }
            QByteArray out("~c\"");
            const bool complete = escapeQuoted(chars, m_options.printableLimit, &out);
            out.append('"');
            if (!complete) {
                out.append(" ++ ...");
            }
            return text(out);
        }
        return containerDoc(text("["), items, 1, text("]"), Break::Maybe, limit,
                            [this](const QList<ElixirTerm> &all, qsizetype at, int *l) {
                                return toDoc(all.at(at), l);
                            });
    }

    // container_doc_with_opts: `stride` items make one element (2 for map entries).
    template <typename ElementFn>
    DocPtr containerDoc(DocPtr left, const QList<ElixirTerm> &items, int stride, DocPtr right,
                        Break breakMode, int *limit, ElementFn element) const
    {
        if (items.isEmpty()) {
            return concat(std::move(left), std::move(right));
        }
        std::vector<DocPtr> docs;
        bool simple = breakMode == Break::Maybe;
        for (qsizetype at = 0; at + stride - 1 < items.size(); at += stride) {
            if (*limit <= 0) {
                docs.push_back(text("..."));
                break;
            }
            int elementLimit = *limit - 1;
            DocPtr doc = element(items, at, &elementLimit);
            *limit = elementLimit;
            simple = simple && isSimple(doc);
            docs.push_back(std::move(doc));
        }
        const bool flex = simple || breakMode == Break::Flex;
        DocPtr joined = docs.back();
        for (auto it = docs.rbegin() + 1; it != docs.rend(); ++it) {
            joined = glue(concat(*it, text(",")), " ", joined, flex);
        }
        if (flex) {
            return group(concat3(std::move(left), nest(joined, 1), std::move(right)));
        }
        return group(glue(nest(glue(std::move(left), "", joined, false), 2), "", std::move(right),
                          false));
    }

    const InspectOptions &m_options;
};

} // namespace

QString inspect(const ElixirTerm &term, const InspectOptions &options)
{
    DocBuilder builder(options);
    int limit = options.limit;
    const DocPtr doc = group(builder.toDoc(term, &limit));
    const qint64 width = options.pretty ? qint64(options.width) : Infinite;
    return QString::fromUtf8(format(doc, width));
}

QString elixirInspect(const QJsonValue &value)
{
    return inspect(ElixirTerm::fromJson(value));
}

} // namespace rt::subscriptions
