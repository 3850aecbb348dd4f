// libFuzzer target for what etcd (or anything listening on its address) sends back: every
// response decoder of server/cluster/etcd/etcd_json.h, the NDJSON splitter of the watch stream
// and the node/claim records other nodes publish. The input's first byte chooses the chunk
// size the stream is cut into; the rest is the stream. Besides crashes, the target aborts when
// the splitter's lines differ from a reference split of the whole input (chunking must not
// matter) or when a decoded value breaks a documented promise.
#include "server/cluster/etcd/etcd_json.h"
#include "server/cluster/types.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

using namespace rt::cluster;
using namespace rt::cluster::etcd;

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

// The reference: split the whole input at once, the simple way.
QList<QByteArray> referenceLines(QByteArrayView input)
{
    QList<QByteArray> lines;
    for (QByteArray line : input.toByteArray().split('\n')) {
        if (line.endsWith('\r')) {
            line.chop(1);
        }
        if (!line.isEmpty()) {
            lines.append(line);
        }
    }
    return lines;
}

void decodeEverything(QByteArrayView body)
{
    (void)decodeRange(body);
    (void)decodePut(body);
    (void)decodeDeleteRange(body);
    (void)decodeTxn(body);
    (void)decodeLeaseRevoke(body);
    (void)errorOf(body);
    if (const auto token = decodeAuthenticate(body)) {
        // The token goes into a header: never empty, never a control character.
        if (token->isEmpty() || token->contains('\n') || token->contains('\r')) {
            std::abort();
        }
    }
    (void)decodeLeaseTimeToLive(body);
    const auto grant = decodeLeaseGrant(body);
    if (grant.ok()) {
        require(grant->id != 0 && grant->ttl > 0);
    }
    const auto keepAlive = decodeKeepAlive(body);
    if (keepAlive.ok()) {
        require(keepAlive->ttl > 0);
    }
    (void)decodeWatchResponse(body);
    const auto node = NodeInfo::fromJson(body);
    if (node.ok()) {
        require(!node->id.isEmpty());
        require(!node->load || *node->load >= 0);
        const auto again = NodeInfo::fromJson(node->toJsonBytes());
        require(again.ok() && *again == *node);
    }
    const auto claim = decodeClaimValue(body);
    if (claim.ok()) {
        require(!claim->owner.isEmpty());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    const qsizetype chunk = 1 + data[0] % 64;
    const QByteArrayView stream(reinterpret_cast<const char *>(data + 1),
                                static_cast<qsizetype>(size - 1));
    NdjsonSplitter splitter;
    QList<QByteArray> lines;
    for (qsizetype at = 0; at < stream.size(); at += chunk) {
        lines += splitter.feed(stream.sliced(at, std::min(chunk, stream.size() - at)));
    }
    QList<QByteArray> expected = referenceLines(stream);
    // The last line has no newline yet: it waits in the splitter (a '\r' it ends with, too).
    const qsizetype lastNewline = stream.lastIndexOf('\n');
    QByteArrayView tail = stream.sliced(lastNewline + 1);
    if (!tail.isEmpty() && !(tail.size() == 1 && tail[0] == '\r')) {
        require(!expected.isEmpty());
        expected.removeLast();
    }
    require(!splitter.failed());
    require(lines == expected);
    require(splitter.buffered() == tail.size());
    for (const QByteArray &line : std::as_const(lines)) {
        decodeEverything(line);
    }
    decodeEverything(stream);
    return 0;
}
