#include "server/wire/http_message.h"

#include "shared/core/hex.h"

#include <http_parser.h>

#include <cstring>
#include <utility>

namespace rt::wire {

namespace {

// Percent-decodes `text`. A '%' not followed by two hex digits is kept literally: a stray '%' in
// a query (e.g. an unencoded "100%") should not cost the client its request.
QByteArray decode(QByteArrayView text, bool plusIsSpace)
{
    QByteArray out;
    out.reserve(text.size());
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '%' && i + 2 < text.size() && hexDigitValue(text[i + 1]) >= 0
            && hexDigitValue(text[i + 2]) >= 0) {
            out.append(char((hexDigitValue(text[i + 1]) << 4) | hexDigitValue(text[i + 2])));
            i += 2;
        } else if (c == '+' && plusIsSpace) {
            out.append(' ');
        } else {
            out.append(c);
        }
    }
    return out;
}

bool equalsIgnoringAsciiCase(QByteArrayView a, QByteArrayView b)
{
    return a.compare(b, Qt::CaseInsensitive) == 0;
}

// Methods the REST API and the WebSocket handshake can use. Others that http-parser knows
// (CONNECT, TRACE, WebDAV, ...) get 501 Not Implemented (RFC 9110 §9.1); tokens it does not know
// at all fail inside http-parser and get 400, since there they are indistinguishable from noise.
bool isSupportedMethod(unsigned method)
{
    switch (method) {
    case HTTP_GET:
    case HTTP_HEAD:
    case HTTP_POST:
    case HTTP_PUT:
    case HTTP_PATCH:
    case HTTP_DELETE:
    case HTTP_OPTIONS:
        return true;
    default:
        return false;
    }
}

// RFC 9110 §5.6.2 token, the syntax of a field name.
bool isToken(QByteArrayView text)
{
    if (text.isEmpty()) {
        return false;
    }
    for (const char c : text) {
        const bool alnum =
                (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!alnum && !QByteArrayView("!#$%&'*+-.^_`|~").contains(c)) {
            return false;
        }
    }
    return true;
}

} // namespace

QByteArray HttpRequest::header(QByteArrayView lowerName) const
{
    for (const auto &field : headers) {
        if (field.first == lowerName) {
            return field.second;
        }
    }
    return {};
}

bool HttpRequest::hasHeader(QByteArrayView lowerName) const
{
    for (const auto &field : headers) {
        if (field.first == lowerName) {
            return true;
        }
    }
    return false;
}

QList<QPair<QByteArray, QByteArray>> parseQuery(QByteArrayView query)
{
    QList<QPair<QByteArray, QByteArray>> params;
    qsizetype start = 0;
    while (start <= query.size()) {
        qsizetype end = query.indexOf('&', start);
        if (end < 0) {
            end = query.size();
        }
        const QByteArrayView part = query.sliced(start, end - start);
        // "a=1&&b=2" and a trailing '&' carry no parameter; skip the empty pieces.
        if (!part.isEmpty()) {
            const qsizetype eq = part.indexOf('=');
            if (eq < 0) {
                // A key without '=' has an empty (but not null) value, so that queryValue can
                // tell "present" from "absent".
                params.append({ decode(part, true), QByteArray("") });
            } else {
                params.append({ decode(part.first(eq), true), decode(part.sliced(eq + 1), true) });
            }
        }
        start = end + 1;
    }
    return params;
}

QByteArray queryValue(const QList<QPair<QByteArray, QByteArray>> &params, QByteArrayView name)
{
    for (const auto &param : params) {
        if (param.first == name) {
            return param.second.isNull() ? QByteArray("") : param.second;
        }
    }
    return {};
}

QByteArray percentDecode(QByteArrayView text)
{
    return decode(text, false);
}

// Wraps one http_parser. Callbacks find this object through parser.data and collect the request
// in place: url/header pieces are appended as http-parser hands them out (it may split any token
// across calls) and the body is appended straight from the caller's buffer, its only copy.
//
// What must stay true for the verdict to be independent of how the input is split (the fuzz
// target checks it): requests are refused only from notify callbacks (headers complete, chunk
// header) or by the pre-scans in feed(), never from data callbacks, because http-parser drops a
// pending data callback when it hits an error and so calls them at split-dependent points.
struct HttpRequestParser::State
{
    // Debian builds libhttp-parser with HTTP_PARSER_STRICT=0, which takes "CR + any byte" as the
    // end of the head. This pre-scan of the head, run on each byte before http-parser sees it,
    // requires every CR to be followed by LF and rejects obs-fold (RFC 9112 §5.2), so that we
    // never read a head differently from a strict proxy in front of us.
    struct HeadFraming
    {
        bool afterCr = false;
        bool atLineStart = false; // after an LF

        // Number of leading bytes of `data` that are acceptable.
        qsizetype scan(const char *data, qsizetype size)
        {
            for (qsizetype i = 0; i < size; ++i) {
                const char c = data[i];
                if ((afterCr && c != '\n') || (atLineStart && (c == ' ' || c == '\t'))) {
                    return i;
                }
                afterCr = c == '\r';
                atLineStart = c == '\n';
            }
            return size;
        }
    };

    // The same for a chunked body, where the non-strict build accepts any two bytes after chunk
    // data and any byte after the CR of a chunk-size line: a lockstep check of the chunk framing
    // (RFC 9112 §7.1) that insists on CRLF everywhere and bounds the trailer section. http-parser
    // still does the actual parsing; this only refuses what a strict parser would refuse.
    struct ChunkedFraming
    {
        enum class Step {
            Size,
            Extension,
            SizeLf,
            Data,
            DataCr,
            DataLf,
            TrailerLineStart,
            TrailerLine,
            TrailerLf,
            FinalLf,
            Done,
        };
        Step step = Step::Size;
        quint64 chunkRemaining = 0;
        int sizeDigits = 0;
        qsizetype trailerBytes = 0;
        int errorStatus = 0; // 400 or 431 once scan() stopped short

        qsizetype scan(const char *data, qsizetype size, qsizetype maxTrailerBytes)
        {
            qsizetype i = 0;
            while (i < size && step != Step::Done) {
                if (step == Step::Data) {
                    const auto take = qsizetype(qMin(chunkRemaining, quint64(size - i)));
                    chunkRemaining -= quint64(take);
                    i += take;
                    if (chunkRemaining == 0) {
                        step = Step::DataCr;
                    }
                    continue;
                }
                if (!accept(data[i], maxTrailerBytes)) {
                    return i;
                }
                ++i;
            }
            return i;
        }

        bool accept(char c, qsizetype maxTrailerBytes)
        {
            switch (step) {
            case Step::Size:
                if (hexDigitValue(c) >= 0) {
                    // 15 digits keep the size far from overflow; http-parser refuses more anyway.
                    if (++sizeDigits > 15) {
                        return refuse(400);
                    }
                    chunkRemaining = chunkRemaining * 16 + quint64(hexDigitValue(c));
                    return true;
                }
                if (sizeDigits == 0) {
                    return refuse(400);
                }
                if (c == ';' || c == ' ') {
                    step = Step::Extension;
                    return true;
                }
                return expect(c, '\r', Step::SizeLf);
            case Step::Extension:
                if (c == '\n') {
                    return refuse(400);
                }
                if (c == '\r') {
                    step = Step::SizeLf;
                }
                return true;
            case Step::SizeLf:
                if (c != '\n') {
                    return refuse(400);
                }
                sizeDigits = 0;
                step = chunkRemaining == 0 ? Step::TrailerLineStart : Step::Data;
                return true;
            case Step::DataCr:
                return expect(c, '\r', Step::DataLf);
            case Step::DataLf:
                return expect(c, '\n', Step::Size);
            case Step::TrailerLineStart:
            case Step::TrailerLine:
            case Step::TrailerLf:
            case Step::FinalLf:
                if (++trailerBytes > maxTrailerBytes) {
                    return refuse(431);
                }
                return acceptTrailer(c);
            case Step::Data:
            case Step::Done:
                break;
            }
            return true;
        }

        bool acceptTrailer(char c)
        {
            switch (step) {
            case Step::TrailerLineStart:
                if (c == '\r') {
                    step = Step::FinalLf;
                    return true;
                }
                if (c == '\n' || c == ' ' || c == '\t') {
                    return refuse(400);
                }
                step = Step::TrailerLine;
                return true;
            case Step::TrailerLine:
                if (c == '\n') {
                    return refuse(400);
                }
                if (c == '\r') {
                    step = Step::TrailerLf;
                }
                return true;
            case Step::TrailerLf:
                return expect(c, '\n', Step::TrailerLineStart);
            case Step::FinalLf:
                return expect(c, '\n', Step::Done);
            default:
                return refuse(400);
            }
        }

        bool expect(char c, char wanted, Step next)
        {
            if (c != wanted) {
                return refuse(400);
            }
            step = next;
            return true;
        }

        bool refuse(int status)
        {
            errorStatus = status;
            return false;
        }
    };

    explicit State(Limits l) : limits(std::move(l)) { init(); }

    void init()
    {
        http_parser_init(&parser, HTTP_REQUEST);
        parser.data = this;
        request = HttpRequest();
        headFraming = HeadFraming();
        chunkedFraming = ChunkedFraming();
        headBytes = 0;
        headersComplete = false;
        chunkedBody = false;
        bodyLimit = limits.maxBodyBytes;
        messageComplete = false;
        lastCallbackWasValue = false;
        failed = false;
        errorStatus = 0;
    }

    // Records why a callback rejects the request; http-parser then stops with HPE_CB_*.
    int reject(int status)
    {
        errorStatus = status;
        return -1;
    }

    static State &of(http_parser *p) { return *static_cast<State *>(p->data); }
    // HTTP_PARSER_ERRNO without its C-style cast (-Wold-style-cast).
    static http_errno errnoOf(const http_parser &p)
    {
        return static_cast<http_errno>(p.http_errno);
    }

    static int onUrl(http_parser *p, const char *at, size_t length)
    {
        of(p).request.target.append(at, qsizetype(length));
        return 0;
    }

    static int onHeaderField(http_parser *p, const char *at, size_t length)
    {
        State &s = of(p);
        if (s.headersComplete) {
            return 0; // a chunked trailer: bounded by ChunkedFraming, not kept (see feed())
        }
        if (s.lastCallbackWasValue || s.request.headers.isEmpty()) {
            // A field that never gets a value callback still ends up with an empty value.
            s.request.headers.append({ QByteArray(), QByteArray("") });
            s.lastCallbackWasValue = false;
        }
        s.request.headers.last().first.append(at, qsizetype(length));
        return 0;
    }

    static int onHeaderValue(http_parser *p, const char *at, size_t length)
    {
        State &s = of(p);
        // http-parser always reports a field before its value; the emptiness check only keeps
        // last() safe should that ever change.
        if (s.headersComplete || s.request.headers.isEmpty()) {
            return 0;
        }
        s.lastCallbackWasValue = true;
        s.request.headers.last().second.append(at, qsizetype(length));
        return 0;
    }

    // The checks of a complete head, in this order: field names, version, method (the body's
    // size comes after, in onHeadersComplete). Returns the status to refuse it with, or 0.
    static int headRefusal(const http_parser *p, const HttpRequest &r)
    {
        // The non-strict build lets spaces into field names ("Content-Length : 5" would become
        // an unrelated header instead of an error).
        for (const auto &field : r.headers) {
            if (!isToken(field.first)) {
                return 400;
            }
        }
        // http-parser also accepts "GET /" as HTTP/0.9 and any single-digit version pair.
        if (p->http_major != 1) {
            return 505;
        }
        if (!isSupportedMethod(p->method)) {
            return 501;
        }
        return 0;
    }

    // A Content-Length body, not a chunked one.
    static bool hasContentLengthBody(const http_parser *p)
    {
        return (p->flags & F_CONTENTLENGTH) != 0 && (p->flags & F_CHUNKED) == 0;
    }

    static void normalizeHeaders(HttpRequest &r)
    {
        for (auto &field : r.headers) {
            field.first = field.first.toLower();
            field.second = field.second.trimmed();
            if (field.second.isNull()) {
                field.second = QByteArray("");
            }
        }
    }

    static void splitTarget(HttpRequest &r)
    {
        // The fragment is not part of an origin-form target (RFC 9112 §3.2); browsers never send
        // one, but should a client do so it must not end up in the path or a query value.
        QByteArrayView target(r.target);
        const qsizetype hash = target.indexOf('#');
        if (hash >= 0) {
            target = target.first(hash);
        }
        const qsizetype question = target.indexOf('?');
        if (question < 0) {
            r.path = target.toByteArray();
        } else {
            r.path = target.first(question).toByteArray();
            r.query = target.sliced(question + 1).toByteArray();
        }
    }

    static int onHeadersComplete(http_parser *p)
    {
        State &s = of(p);
        s.headersComplete = true;
        // Decided once, here: http-parser's F_CHUNKED flag changes while it parses a trailer
        // field named Transfer-Encoding, so reading it live would skip trailer bytes past the
        // framing check depending on where the input was split.
        s.chunkedBody = (p->flags & F_CHUNKED) != 0;
        HttpRequest &r = s.request;
        if (const int status = headRefusal(p, r)) {
            return s.reject(status);
        }

        r.method = QByteArray(http_method_str(static_cast<http_method>(p->method)));
        r.httpMajor = p->http_major;
        r.httpMinor = p->http_minor;
        r.keepAlive = http_should_keep_alive(p) != 0;
        normalizeHeaders(r);
        r.upgrade = p->upgrade != 0 || r.hasHeader("upgrade");
        splitTarget(r);

        s.bodyLimit = s.limits.bodyLimit
                ? qBound(qsizetype(0), s.limits.bodyLimit(r), s.limits.maxBodyBytes)
                : s.limits.maxBodyBytes;
        if (hasContentLengthBody(p) && p->content_length > quint64(s.bodyLimit)) {
            return s.reject(413);
        }
        if (hasContentLengthBody(p) && p->content_length > 0) {
            // Checked against the body limit above: one exact allocation, one copy of the body.
            r.body.reserve(qsizetype(p->content_length));
        }
        return 0;
    }

    static int onChunkHeader(http_parser *p)
    {
        State &s = of(p);
        // content_length holds this chunk's size; refuse before its bytes arrive.
        const auto room = quint64(s.bodyLimit - s.request.body.size());
        return p->content_length > room ? s.reject(413) : 0;
    }

    static int onBody(http_parser *p, const char *at, size_t length)
    {
        of(p).request.body.append(at, qsizetype(length));
        return 0;
    }

    static int onMessageComplete(http_parser *p)
    {
        of(p).messageComplete = true;
        // Stop right after this request: execute() returns the bytes used so far, and pipelined
        // bytes stay with the caller until reset().
        http_parser_pause(p, 1);
        return 0;
    }

    static const http_parser_settings &settings()
    {
        static const http_parser_settings S = [] {
            http_parser_settings init;
            http_parser_settings_init(&init);
            init.on_url = &State::onUrl;
            init.on_header_field = &State::onHeaderField;
            init.on_header_value = &State::onHeaderValue;
            init.on_headers_complete = &State::onHeadersComplete;
            init.on_body = &State::onBody;
            init.on_message_complete = &State::onMessageComplete;
            init.on_chunk_header = &State::onChunkHeader;
            return init;
        }();
        return S;
    }

    // How many of the `size` bytes at `piece` go to http-parser in the next step of feed(). When
    // the checks refuse a byte, the piece ends just before it and `refusal` gets the status.
    qsizetype checkedPieceSize(const char *piece, qsizetype size, int &refusal)
    {
        if (!headersComplete) {
            return headPieceSize(piece, size, refusal);
        }
        if (chunkedBody) {
            const qsizetype passed = chunkedFraming.scan(piece, size, limits.maxHeaderBytes);
            if (passed < size) {
                refusal = chunkedFraming.errorStatus;
                return passed;
            }
        }
        return size;
    }

    // One line of the head at most, and only what still fits under maxHeaderBytes.
    qsizetype headPieceSize(const char *piece, qsizetype size, int &refusal)
    {
        const qsizetype allowance = limits.maxHeaderBytes - headBytes;
        if (allowance <= 0) {
            refusal = 431; // refused before http-parser sees another byte
            return 0;
        }
        size = qMin(size, allowance);
        if (const void *lf = std::memchr(piece, '\n', size_t(size))) {
            size = static_cast<const char *>(lf) - piece + 1;
        }
        const qsizetype passed = headFraming.scan(piece, size);
        if (passed < size) {
            refusal = 400;
            return passed;
        }
        return size;
    }

    Outcome error(qsizetype consumed)
    {
        if (errorStatus == 0) {
            errorStatus = errnoOf(parser) == HPE_HEADER_OVERFLOW ? 431 : 400;
        }
        failed = true;
        return { Status::Error, consumed, errorStatus };
    }

    http_parser parser{}; // set up by http_parser_init() in init()
    Limits limits;
    HttpRequest request;
    HeadFraming headFraming;
    ChunkedFraming chunkedFraming;
    qsizetype headBytes = 0; // request line + headers seen so far (until headersComplete)
    bool headersComplete = false;
    bool chunkedBody = false; // the body is chunked (fixed at the end of the head)
    qsizetype bodyLimit = 0; // of the current request, fixed at the end of its head
    bool messageComplete = false;
    bool lastCallbackWasValue = false;
    bool failed = false;
    int errorStatus = 0;
};

HttpRequestParser::HttpRequestParser() : HttpRequestParser(Limits()) { }

HttpRequestParser::HttpRequestParser(const Limits &limits)
    : m_state(std::make_unique<State>(limits))
{ }

HttpRequestParser::~HttpRequestParser() = default;

// Each step hands http-parser a piece of the input that the checks above have passed:
//  - while the head is incomplete, one line at most, and only bytes that still fit under
//    maxHeaderBytes. An oversized head is refused when the first byte past the limit arrives,
//    unparsed, and since the head always ends with an LF, it ends at a piece boundary: no body
//    byte is ever scanned as head.
//  - a chunked body is passed through ChunkedFraming; a Content-Length body goes as it is.
// A refused byte stops the piece just before it; http-parser parses the bytes before it (they
// may hold an earlier error, which wins), then the refusal is reported. Every byte therefore meets
// the same checks in the same order whether it arrives alone or with the whole request.
HttpRequestParser::Outcome HttpRequestParser::feed(QByteArrayView data)
{
    State &s = *m_state;
    if (s.failed) {
        return { Status::Error, 0, s.errorStatus };
    }
    if (s.messageComplete) {
        return { Status::Complete, 0, 0 }; // the caller must takeRequest() and reset() first
    }

    qsizetype offset = 0;
    while (offset < data.size()) {
        const char *piece = data.data() + offset;
        int refusal = 0;
        const bool inHead = !s.headersComplete;
        const qsizetype size = s.checkedPieceSize(piece, data.size() - offset, refusal);

        if (size > 0) {
            // Never call execute() with 0 bytes: http-parser reads that as end of stream.
            const size_t parsed =
                    http_parser_execute(&s.parser, &State::settings(), piece, size_t(size));
            const http_errno err = State::errnoOf(s.parser);
            if (err == HPE_PAUSED && s.messageComplete) {
                return { Status::Complete, offset + qsizetype(parsed), 0 };
            }
            if (err != HPE_OK) {
                return s.error(offset + qsizetype(parsed));
            }
            if (inHead) {
                s.headBytes += qsizetype(parsed);
            }
            offset += qsizetype(parsed);
            // With HPE_OK http-parser consumes everything it was given (it only stops early for
            // an upgrade, and that goes through onMessageComplete, i.e. HPE_PAUSED).
            if (parsed != size_t(size)) {
                return s.error(offset); // not expected; refuse rather than loop
            }
        }
        if (refusal != 0) {
            s.errorStatus = refusal;
            return s.error(offset);
        }
    }
    return { Status::NeedMore, offset, 0 };
}

HttpRequest HttpRequestParser::takeRequest()
{
    return std::exchange(m_state->request, HttpRequest());
}

void HttpRequestParser::reset()
{
    m_state->init();
}

void HttpResponse::setHeader(const QByteArray &name, const QByteArray &value)
{
    for (auto &field : headers) {
        if (equalsIgnoringAsciiCase(field.first, name)) {
            field.second = value;
            return;
        }
    }
    headers.append({ name, value });
}

HttpResponse HttpResponse::json(int status, QByteArray body)
{
    HttpResponse response;
    response.status = status;
    response.headers.append({ QByteArray("content-type"), QByteArray("application/json") });
    response.body = std::move(body);
    return response;
}

HttpResponse HttpResponse::empty(int status)
{
    HttpResponse response;
    response.status = status;
    return response;
}

// Tabular: the reason phrase of every status this server may send (RFC 9110).
QByteArrayView reasonPhrase(int status)
{
    switch (status) {
    case 100:
        return "Continue";
    case 101:
        return "Switching Protocols";
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 206:
        return "Partial Content";
    case 301:
        return "Moved Permanently";
    case 302:
        return "Found";
    case 303:
        return "See Other";
    case 304:
        return "Not Modified";
    case 307:
        return "Temporary Redirect";
    case 308:
        return "Permanent Redirect";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 408:
        return "Request Timeout";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 411:
        return "Length Required";
    case 412:
        return "Precondition Failed";
    case 413:
        return "Content Too Large";
    case 414:
        return "URI Too Long";
    case 415:
        return "Unsupported Media Type";
    case 417:
        return "Expectation Failed";
    case 422:
        return "Unprocessable Content";
    case 426:
        return "Upgrade Required";
    case 428:
        return "Precondition Required";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Unknown";
    }
}

QByteArray serializeResponse(const HttpResponse &response, bool keepAlive, BodyMode bodyMode)
{
    // RFC 9110 §8.6: no Content-Length in 1xx and 204 responses; everything else always carries
    // one (also 0) so that keep-alive clients know where the response ends.
    const bool mayHaveContentLength = response.status >= 200 && response.status != 204;

    QByteArray out;
    out.reserve(128 + response.body.size() + response.headers.size() * 48);
    out.append("HTTP/1.1 ");
    out.append(QByteArray::number(response.status));
    out.append(' ');
    out.append(reasonPhrase(response.status));
    out.append("\r\n");
    for (const auto &field : response.headers) {
        // We compute these two; a copy given by the caller would contradict or duplicate ours.
        if (equalsIgnoringAsciiCase(field.first, "content-length")
            || (!keepAlive && equalsIgnoringAsciiCase(field.first, "connection"))) {
            continue;
        }
        out.append(field.first);
        out.append(": ");
        out.append(field.second);
        out.append("\r\n");
    }
    if (mayHaveContentLength) {
        out.append("content-length: ");
        out.append(QByteArray::number(response.body.size()));
        out.append("\r\n");
    }
    if (!keepAlive) {
        out.append("connection: close\r\n");
    }
    out.append("\r\n");
    if (bodyMode == BodyMode::Include) {
        out.append(response.body);
    }
    return out;
}

} // namespace rt::wire
