#pragma once

#include <QByteArray>
#include <QtGlobal>

namespace rt::testsupport {

// One HTTP exchange over a raw socket, for tests that must see exact status lines, headers and
// bodies (including what a well-behaved client library would hide).
struct RawResponse
{
    int status = 0;
    QByteArray head; // status line and headers, without the blank line
    QByteArray body;

    // The first value of a header (name compared case-insensitively), or a null QByteArray.
    QByteArray header(const QByteArray &name) const;
};

// Sends `request` on a fresh connection to 127.0.0.1:`port` and reads the response until the
// peer closes or a complete response (by content-length, or a 101 head) has arrived. Spins the
// event loop meanwhile; status 0 when nothing arrived in time.
RawResponse exchange(quint16 port, const QByteArray &request, int timeoutMs = 5000);

} // namespace rt::testsupport
