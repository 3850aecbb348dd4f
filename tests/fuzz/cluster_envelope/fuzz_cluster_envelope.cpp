// libFuzzer target for the cluster fan-out's frames: every envelope (kinds 16 and 31), interest
// frame (kinds 17-19, 30) and history frame (kinds 32, 33) another node sends is decoded from
// untrusted bytes on the cluster thread.
//
// Input layout: byte 0 (mod 7) picks the decoder: 0 envelope, 1 interest update, 2 interest
// sync request, 3 interest sync, 4 interest ack, 5 history request, 6 history reply chunk; the
// rest is the frame payload. Besides crashes, the target
// aborts when a promise breaks: the formats are canonical, so whatever decodes re-encodes to
// exactly the input; a decoded envelope rebuilds a message whose envelope is the same, and that
// message encodes its Phoenix frames for both serializers without failing on hostile bytes.
#include "server/pubsub/cluster_envelope.h"
#include "server/pubsub/cluster_interest.h"
#include "server/pubsub/history_wire.h"

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

void checkEnvelope(QByteArrayView bytes)
{
    using namespace rt::pubsub;
    const auto envelope = decodeEnvelope(bytes);
    if (!envelope.ok()) {
        require(!envelope.error().message.isEmpty());
        return;
    }
    require(encodeEnvelope(*envelope) == bytes);
    require(!envelope->topic.tenant().isEmpty());
    require(envelope->audience != Audience::Members);
    const OutboundMessagePtr message =
            envelope->toMessage(DeliveryCounting{ nullptr, envelope->countsAsBroadcast, nullptr });
    const auto again = envelopeOf(*message);
    require(again.ok());
    require(*again == *envelope);
    require(message->excludedMember() == 0);
    for (const rt::protocol::Vsn vsn : { rt::protocol::Vsn::V1, rt::protocol::Vsn::V2 }) {
        const OutboundMessage::Frame &frame = message->frameFor(vsn);
        require(frame.bytes.isEmpty() == frame.wire.isEmpty());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    const QByteArrayView payload(reinterpret_cast<const char *>(data) + 1,
                                 static_cast<qsizetype>(size - 1));
    switch (data[0] % 7) {
    case 0:
        checkEnvelope(payload);
        break;
    case 1: {
        const auto update = rt::pubsub::decodeInterestUpdate(payload);
        if (update.ok()) {
            require(rt::pubsub::encodeInterestUpdate(*update) == payload);
        }
        break;
    }
    case 2: {
        const auto request = rt::pubsub::decodeInterestSyncRequest(payload);
        if (request.ok()) {
            require(rt::pubsub::encodeInterestSyncRequest() == payload);
        }
        break;
    }
    case 3: {
        const auto sync = rt::pubsub::decodeInterestSync(payload);
        if (sync.ok()) {
            require(rt::pubsub::encodeInterestSync(*sync) == payload);
        }
        break;
    }
    case 4: {
        const auto ack = rt::pubsub::decodeInterestAck(payload);
        if (ack.ok()) {
            require(rt::pubsub::encodeInterestAck(*ack) == payload);
        }
        break;
    }
    case 5: {
        const auto request = rt::pubsub::history_wire::decodeRequest(payload);
        if (request) {
            require(rt::pubsub::history_wire::encodeRequest(*request) == payload);
            require(!request->topic.tenant().isEmpty());
        } else {
            require(!request.error().isEmpty());
        }
        break;
    }
    default: {
        const auto chunk = rt::pubsub::history_wire::decodeReplyChunk(payload);
        if (chunk) {
            require(rt::pubsub::history_wire::encodeReplyChunk(*chunk) == payload);
            for (const QByteArray &envelope : chunk->envelopes) {
                checkEnvelope(envelope);
            }
        } else {
            require(!chunk.error().isEmpty());
        }
        break;
    }
    }
    return 0;
}
