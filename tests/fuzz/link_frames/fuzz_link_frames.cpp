// libFuzzer target for the node-link wire format: every byte a peer (or anything else that
// reaches CLUSTER_PORT) sends goes through FrameDecoder, and handshake payloads through
// decodeHello / decodeRejectReason before the peer is authenticated.
//
// Input layout: byte 0 picks the decoder's payload limit (2^(b mod 25) bytes), byte 1 seeds
// the chunk sizes the rest is fed in (so the same stream is also tested split at odd places).
// Besides crashes, the target aborts when a promise breaks: the frames decoded, re-encoded,
// must be exactly a prefix of the input; nothing comes out after an error; a frame never
// exceeds the limit; a hello that parses re-encodes to the same bytes.
#include "server/cluster/links/frame_codec.h"
#include "server/cluster/links/handshake.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

void checkControlPayload(const rt::cluster::links::Frame &frame)
{
    using namespace rt::cluster::links;
    if (frame.kind == static_cast<quint8>(ControlKind::Hello)) {
        const auto hello = decodeHello(frame.payload);
        if (hello.ok()) {
            require(hello->nonce.size() == HelloNonceBytes);
            require(!hello->nodeId.isEmpty());
            require(encodeHello(*hello) == frame.payload);
        } else {
            require(!hello.error().message.isEmpty());
        }
    } else if (frame.kind == static_cast<quint8>(ControlKind::Reject)) {
        const QString reason = decodeRejectReason(frame.payload);
        require(reason.size() <= MaxRejectReasonBytes);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace rt::cluster::links;
    if (size < 2) {
        return 0;
    }
    const quint32 limit = 1U << (data[0] % 25);
    unsigned chunkSeed = data[1];
    const QByteArrayView stream(reinterpret_cast<const char *>(data + 2),
                                static_cast<qsizetype>(size - 2));

    FrameDecoder decoder(limit);
    QByteArray reencoded;
    qsizetype position = 0;
    while (position < stream.size()) {
        // Chunk sizes 1..64, varying with the seed.
        chunkSeed = chunkSeed * 1103515245U + 12345U;
        const qsizetype chunk =
                qMin<qsizetype>(1 + (chunkSeed >> 16) % 64, stream.size() - position);
        decoder.feed(stream.sliced(position, chunk));
        position += chunk;
        while (auto frame = decoder.next()) {
            require(!decoder.hasError());
            require(frame->kind != 0);
            require(frame->payload.size() <= static_cast<qsizetype>(limit));
            reencoded += encodeFrame(frame->kind, frame->payload);
            checkControlPayload(*frame);
        }
        require(decoder.bufferedBytes() <= position);
    }
    require(stream.startsWith(reencoded));
    if (decoder.hasError()) {
        require(!decoder.next().has_value());
        require(!decoder.error()->message.isEmpty());
        require(decoder.bufferedBytes() == 0);
    } else {
        require(reencoded.size() + decoder.bufferedBytes() == stream.size());
    }
    return 0;
}
