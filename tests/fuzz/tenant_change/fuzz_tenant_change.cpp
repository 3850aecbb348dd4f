// libFuzzer target for the "tenant written" message (frame kind 27), decoded from another
// node's untrusted bytes on the cluster thread.
//
// The input is the frame payload. Besides crashes, the target aborts when a promise breaks: a
// decoded id is 1 to MaxIdBytes bytes of UTF-8, its encoding is the input itself (the format is
// canonical) and it decodes again to the same id.
#include "server/tenants/tenant_change_wire.h"

#include <QString>

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
    using namespace rt::tenants::change_wire;
    const QByteArrayView bytes(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const auto id = decode(bytes);
    if (!id.ok()) {
        require(!id.error().message.isEmpty());
        return 0;
    }
    require(!id->isEmpty() && id->size() <= MaxIdBytes);
    require(QString::fromUtf8(*id).toUtf8() == *id);
    const QByteArray again = encode(*id);
    require(again == bytes);
    const auto twice = decode(again);
    require(twice.ok() && *twice == *id);
    return 0;
}
