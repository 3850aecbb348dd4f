// libFuzzer target for the streaming replication CopyData parser: these bytes come from a
// tenant's database server (PQgetCopyData) and must never crash us. Besides crashes, the target
// aborts when a result breaks the parser's promises: an XLogData payload is exactly the bytes
// after the 25-byte header, errors carry a message, and a keepalive's fields rebuild its first
// 18 bytes. Every input is also read as LSN text, which must round-trip when it parses.
#include "server/replication/copy_data.h"

#include <QtEndian>

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
    const QByteArrayView input(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const auto parsed = rt::replication::parseCopyData(input);
    if (parsed.ok()) {
        if (const auto *xlog = std::get_if<rt::replication::XLogData>(&*parsed)) {
            require(input.front() == 'w');
            require(xlog->payload.data() == input.data() + rt::replication::XLogDataHeaderSize);
            require(xlog->payload.size() == input.size() - rt::replication::XLogDataHeaderSize);
            require(xlog->walStart == qFromBigEndian<quint64>(input.data() + 1));
        } else {
            const auto &keepalive = std::get<rt::replication::PrimaryKeepalive>(*parsed);
            require(input.front() == 'k');
            require(input.size() >= rt::replication::KeepaliveSize);
            require(keepalive.walEnd == qFromBigEndian<quint64>(input.data() + 1));
            require(keepalive.replyRequested == (input.at(17) != 0));
        }
    } else {
        require(!parsed.error().message.isEmpty());
    }

    if (const auto lsn = rt::replication::parseLsn(input)) {
        const QByteArray text = rt::replication::formatLsn(*lsn);
        require(rt::replication::parseLsn(text) == lsn);
        require(text.size() <= input.size());
    }
    return 0;
}
