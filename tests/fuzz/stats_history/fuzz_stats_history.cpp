// libFuzzer target for a node's own history (frame kind 34), sent by another node when a link
// comes up and decoded from its untrusted bytes on the cluster thread.
//
// The input is the frame payload. Besides crashes, the target aborts when a promise breaks: a
// decoded history is bounded, in strictly increasing time with figures in range, its encoding
// is the input itself (the format is canonical) and it decodes again to the same samples.
#include "server/cluster/stats/stats_wire.h"

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

bool inRange(double figure)
{
    return figure >= 0 && figure <= double(rt::cluster::stats::MaxMilliRate) / 1000.0;
}

bool countInRange(qint64 count)
{
    return count >= 0 && count <= rt::cluster::stats::MaxCount;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace rt::cluster::stats;
    const QByteArrayView bytes(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const auto samples = decodeHistory(bytes);
    if (!samples.ok()) {
        require(!samples.error().message.isEmpty());
        return 0;
    }
    require(samples->size() <= MaxHistorySamples);
    for (qsizetype i = 0; i < samples->size(); ++i) {
        const rt::api::NodeSample &sample = samples->at(i);
        require(i == 0 || samples->at(i - 1).atMs < sample.atMs);
        require(inRange(sample.cpuCores) && inRange(sample.loopLagMs));
        require(inRange(sample.messagesInPerSecond) && inRange(sample.messagesOutPerSecond));
        require(countInRange(sample.residentBytes) && countInRange(sample.connections)
                && countInRange(sample.channels));
        require(!sample.load || inRange(*sample.load));
    }
    const QByteArray again = encodeHistory(*samples);
    require(again == bytes);
    const auto twice = decodeHistory(again);
    require(twice.ok());
    require(*twice == *samples);
    return 0;
}
