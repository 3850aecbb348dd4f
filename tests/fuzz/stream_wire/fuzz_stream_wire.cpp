// libFuzzer target for the node-link messages of tenant change streams (frame kinds 24 control,
// 25 delivery), decoded from another node's untrusted bytes on the cluster thread.
//
// Input layout: byte 0 (even: control, odd: delivery); the rest is the frame payload. Besides
// crashes, the target aborts when a promise breaks: a decoded delivery re-encodes to exactly the
// input (the format is canonical) and has a tenant, ascending members and a valid stamp; a
// decoded control message survives an encode/decode round trip unchanged in kind.
#include "server/cdc/stream_wire.h"

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

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    using namespace rt::cdc::wire;
    const QByteArrayView bytes(reinterpret_cast<const char *>(data) + 1,
                               static_cast<qsizetype>(size - 1));
    if ((data[0] & 1) == 0) {
        const auto message = decodeControl(bytes);
        if (!message.ok()) {
            require(!message.error().message.isEmpty());
            return 0;
        }
        const auto again = decodeControl(encodeControl(*message));
        require(again.ok());
        require(again->index() == message->index());
        return 0;
    }
    const auto delivery = decodeDelivery(bytes);
    if (!delivery.ok()) {
        require(!delivery.error().message.isEmpty());
        return 0;
    }
    require(!delivery->topic.tenant().isEmpty());
    for (size_t i = 1; i < delivery->members.size(); ++i) {
        require(delivery->members[i - 1] < delivery->members[i]);
    }
    require(delivery->stamp.logId != 0 && delivery->stamp.floor >= 1
            && delivery->stamp.floor <= delivery->stamp.seq);
    require(encodeDelivery(delivery->stamp, delivery->topic, delivery->event, delivery->payload,
                           delivery->members)
            == bytes);
    return 0;
}
