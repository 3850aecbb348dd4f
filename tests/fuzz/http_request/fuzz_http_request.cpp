// Fuzzes HttpRequestParser like a connection would drive it: feed, take each complete request,
// reset and continue with the pipelined rest, stop at an upgrade or an error. The outcome must
// be identical whether the bytes arrive whole, split at a data-derived offset, or one by one.
// The query/percent-decoding helpers and serializeResponse run on what the parser produced.
//
// Input layout: byte 0 selects the limits, bytes 1-2 the split offset, the rest is the stream.
#include "server/wire/http_message.h"

#include <QByteArrayList>
#include <QList>
#include <QStringBuilder>

#include <cstdint>
#include <cstdlib>

using rt::wire::HttpRequest;
using rt::wire::HttpRequestParser;
using Status = HttpRequestParser::Status;

namespace {

QByteArray describe(const HttpRequest &r, qsizetype endOffset)
{
    QByteArray out = "R@" + QByteArray::number(endOffset) + ' ' + r.method + ' ' + r.target + ' '
            + r.path + ' ' + r.query + ' ' + QByteArray::number(r.httpMajor) + '.'
            + QByteArray::number(r.httpMinor) + (r.keepAlive ? 'k' : 'c') + (r.upgrade ? 'u' : '-');
    for (const auto &field : r.headers) {
        out += '\n' + field.first + ':' + field.second;
    }
    return out + "\n\n" + r.body;
}

void exerciseHelpers(const HttpRequest &r)
{
    const auto params = rt::wire::parseQuery(r.query);
    for (const auto &param : params) {
        if (rt::wire::queryValue(params, param.first).isNull()) {
            std::abort();
        }
    }
    if (rt::wire::percentDecode(r.path).size() > r.path.size()) {
        std::abort();
    }
    const QByteArray response =
            rt::wire::serializeResponse(rt::wire::HttpResponse::json(200, r.body), r.keepAlive);
    if (!response.startsWith("HTTP/1.1 200 OK\r\n") || !response.endsWith(r.body)) {
        std::abort();
    }
}

QByteArrayList play(QByteArrayView input, const HttpRequestParser::Limits &limits,
                    const QList<qsizetype> &cuts, bool checkRequests)
{
    HttpRequestParser parser(limits);
    QByteArrayList events;
    QByteArray buffer;
    qsizetype consumedTotal = 0;
    qsizetype start = 0;
    QList<qsizetype> ends = cuts;
    ends.append(input.size());
    for (const qsizetype end : std::as_const(ends)) {
        buffer.append(input.sliced(start, end - start));
        start = end;
        while (!buffer.isEmpty()) {
            const HttpRequestParser::Outcome outcome = parser.feed(buffer);
            if (outcome.status == Status::Error) {
                const int s = outcome.errorStatus;
                if (s != 400 && s != 413 && s != 431 && s != 501 && s != 505) {
                    std::abort();
                }
                events.append("E" + QByteArray::number(s));
                return events;
            }
            if (outcome.status == Status::NeedMore) {
                if (outcome.consumed != buffer.size()) {
                    std::abort();
                }
                consumedTotal += outcome.consumed;
                buffer.clear();
                break;
            }
            if (outcome.consumed <= 0 || outcome.consumed > buffer.size()) {
                std::abort();
            }
            consumedTotal += outcome.consumed;
            buffer.remove(0, outcome.consumed);
            const HttpRequest request = parser.takeRequest();
            if (request.body.size() > limits.maxBodyBytes || request.httpMajor != 1) {
                std::abort();
            }
            if (checkRequests) {
                exerciseHelpers(request);
            }
            events.append(describe(request, consumedTotal));
            if (request.upgrade) {
                return events; // the rest belongs to the next protocol
            }
            parser.reset();
        }
    }
    events.append("N");
    return events;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) {
        return 0;
    }
    HttpRequestParser::Limits limits;
    // Odd selectors keep the production limits; even ones pick small ones so that 431 and 413
    // are reached with small inputs.
    if ((data[0] & 1) == 0) {
        limits.maxHeaderBytes = 16 + (data[0] >> 1);
        limits.maxBodyBytes = data[0] >> 3;
    }
    const QByteArrayView stream(reinterpret_cast<const char *>(data) + 3, qsizetype(size - 3));
    const qsizetype split = qsizetype((size_t(data[1]) << 8) | data[2]) % (stream.size() + 1);

    const QByteArrayList whole = play(stream, limits, {}, true);
    if (play(stream, limits, { split }, false) != whole) {
        std::abort();
    }
    QList<qsizetype> everyByte;
    for (qsizetype i = 1; i < stream.size(); ++i) {
        everyByte.append(i);
    }
    if (play(stream, limits, everyByte, false) != whole) {
        std::abort();
    }
    return 0;
}
