// libFuzzer target for the cluster fan-out's frames: every envelope (kind 16) and interest
// frame (kinds 17-19, 30) another node sends is decoded from untrusted bytes on the cluster
// thread.
//
// Input layout: byte 0 (mod 5) picks the decoder: 0 envelope, 1 interest update, 2 interest
// sync request, 3 interest sync, 4 interest ack; the rest is the frame payload. Besides crashes, the target
// aborts when a promise breaks: the formats are canonical, so whatever decodes re-encodes to
// exactly the input; a decoded envelope rebuilds a message whose envelope is the same, and that
// message encodes its Phoenix frames for both serializers without failing on hostile bytes.
#include "server/pubsub/cluster_envelope.h"
#include "server/pubsub/cluster_interest.h"

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
    switch (data[0] % 5) {
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
    default: {
        const auto ack = rt::pubsub::decodeInterestAck(payload);
        if (ack.ok()) {
            require(rt::pubsub::encodeInterestAck(*ack) == payload);
        }
        break;
    }
    }
    return 0;
}
