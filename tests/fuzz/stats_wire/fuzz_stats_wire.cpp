// libFuzzer target for the node-stats message of the admin view (frame kind 26), decoded from
// another node's untrusted bytes on the cluster thread.
//
// The input is the frame payload. Besides crashes, the target aborts when a promise breaks: a
// decoded message has figures in range, its encoding is the input itself (the format is
// canonical) and it decodes again to the same message.
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

bool inRange(double rate)
{
    return rate >= 0 && rate <= double(rt::cluster::stats::MaxMilliRate) / 1000.0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace rt::cluster::stats;
    const QByteArrayView bytes(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const auto stats = decode(bytes);
    if (!stats.ok()) {
        require(!stats.error().message.isEmpty());
        return 0;
    }
    require(stats->connections >= 0 && stats->connections <= MaxCount);
    require(stats->channels >= 0 && stats->channels <= MaxCount);
    require(inRange(stats->messagesInPerSecond) && inRange(stats->messagesOutPerSecond));
    require(inRange(stats->cpuCores) && stats->cpuCount >= 0);
    require(stats->residentBytes >= 0 && stats->residentBytes <= MaxCount);
    require(stats->workers.size() <= MaxWorkers);
    for (const WorkerLoad &worker : stats->workers) {
        require(inRange(worker.cpuCores) && inRange(worker.loopLagMs));
    }
    for (const LinkRate &link : stats->links) {
        require(inRange(link.messagesPerSecond) && inRange(link.bytesPerSecond));
        require(link.peer.toUtf8().size() <= MaxIdBytes);
    }
    for (const TenantRate &tenant : stats->tenants) {
        require(inRange(tenant.messagesInPerSecond) && inRange(tenant.messagesOutPerSecond));
        require(tenant.tenant.size() <= MaxIdBytes);
    }
    const QByteArray again = encode(*stats);
    require(again == bytes);
    const auto twice = decode(again);
    require(twice.ok());
    require(*twice == *stats);
    return 0;
}
