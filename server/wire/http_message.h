#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>

#include <functional>
#include <memory>

// HTTP/1.1 requests and responses as values, and a resumable request parser built on Debian's
// http-parser (libhttp-parser). No sockets here.
namespace rt::wire {

struct HttpRequest
{
    QByteArray method; // "GET", "POST", ...
    QByteArray target; // raw request-target, e.g. "/socket/websocket?apikey=x&vsn=2.0.0"
    QByteArray path; // target without the query, percent-decoding NOT applied
    QByteArray query; // raw query string without '?', may be empty
    QList<QPair<QByteArray, QByteArray>> headers; // names lower-cased, values trimmed
    QByteArray body;
    int httpMajor = 1;
    int httpMinor = 1;
    bool keepAlive = true; // per HTTP version and Connection header
    bool upgrade = false; // the request asks for a protocol upgrade (Upgrade header present)

    // First value of a header (name in lower case), or a null QByteArray.
    QByteArray header(QByteArrayView lowerName) const;
    bool hasHeader(QByteArrayView lowerName) const;
};

// Percent-decoded query parameters in order ('+' is decoded as a space, as in forms).
QList<QPair<QByteArray, QByteArray>> parseQuery(QByteArrayView query);
// Value of the first parameter called `name`, or a null QByteArray when absent.
QByteArray queryValue(const QList<QPair<QByteArray, QByteArray>> &params, QByteArrayView name);
// Percent-decoding of a path segment or token ('+' kept).
QByteArray percentDecode(QByteArrayView text);

// Parses one request at a time. Feed bytes until it reports Complete, take the request, and
// feed the rest of the bytes (pipelined requests) after calling reset().
class HttpRequestParser
{
public:
    struct Limits
    {
        qsizetype maxHeaderBytes = qsizetype(16) * 1024; // request line + headers
        qsizetype maxBodyBytes = qsizetype(8) * 1024 * 1024;
        // The largest body one request may have, judged from its complete head before any body
        // byte is read (e.g. small unless it carries valid credentials); never more than
        // maxBodyBytes. Unset: maxBodyBytes for every request. A larger Content-Length or chunk
        // is refused with 413 at once.
        std::function<qsizetype(const HttpRequest &head)> bodyLimit;
    };

    enum class Status {
        NeedMore, // all bytes consumed, request incomplete
        Complete, // a request is complete; `consumed` bytes of the input were used
        Error, // malformed or over a limit; answer errorStatus and close
    };

    struct Outcome
    {
        Status status = Status::NeedMore;
        qsizetype consumed = 0;
        int errorStatus = 0; // 400, 413, 431, 501, ...
    };

    // Two constructors instead of `Limits limits = {}`: a nested struct with default member
    // initializers cannot be a default argument inside its enclosing class (CWG 1397).
    HttpRequestParser();
    explicit HttpRequestParser(const Limits &limits);
    ~HttpRequestParser();
    HttpRequestParser(const HttpRequestParser &) = delete;
    HttpRequestParser &operator=(const HttpRequestParser &) = delete;

    // For an upgrade request, Complete is reported at the end of the head; bytes after it belong
    // to the new protocol and are not consumed.
    Outcome feed(QByteArrayView data);
    HttpRequest takeRequest();
    void reset(); // ready for the next request on the same connection

private:
    struct State;
    std::unique_ptr<State> m_state;
};

struct HttpResponse
{
    int status = 200;
    QList<QPair<QByteArray, QByteArray>> headers; // written as given
    QByteArray body;

    void setHeader(const QByteArray &name, const QByteArray &value);
    // A response with Content-Type application/json and the given body.
    static HttpResponse json(int status, QByteArray body);
    // A response with no body.
    static HttpResponse empty(int status);
};

// "Not Found" for 404 etc.; "Unknown" for codes without a standard phrase.
QByteArrayView reasonPhrase(int status);
// Serializes status line, headers, Content-Length (always, computed from body), and body.
// `keepAlive == false` adds "Connection: close".
// An answer to HEAD has the headers of the GET answer, Content-Length included, and no body
// (RFC 9110 §9.3.2).
enum class BodyMode { Include, Omit };
QByteArray serializeResponse(const HttpResponse &response, bool keepAlive,
                             BodyMode bodyMode = BodyMode::Include);

} // namespace rt::wire
