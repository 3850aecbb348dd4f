#include "tests/support/server/raw_http.h"

#include <QHostAddress>
#include <QTcpSocket>
#include <QTest>

namespace rt::testsupport {

QByteArray RawResponse::header(const QByteArray &name) const
{
    const QByteArray wanted = name.toLower() + ':';
    for (const QByteArray &line : head.split('\n')) {
        if (line.toLower().startsWith(wanted)) {
            return line.mid(wanted.size()).trimmed();
        }
    }
    return {};
}

// Sends `request` on a fresh connection and reads the response until the peer closes or a
// complete response (by content-length, or a 101 head) has arrived.
RawResponse exchange(quint16 port, const QByteArray &request, int timeoutMs)
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, port);
    RawResponse response;
    if (!QTest::qWaitFor([&] { return socket.state() == QAbstractSocket::ConnectedState; },
                         timeoutMs)) {
        return response;
    }
    socket.write(request);
    QByteArray data;
    [[maybe_unused]] const bool complete = QTest::qWaitFor(
            [&] {
                data += socket.readAll();
                const qsizetype end = data.indexOf("\r\n\r\n");
                if (end < 0) {
                    return socket.state() == QAbstractSocket::UnconnectedState;
                }
                const QByteArray head = data.left(end);
                if (head.startsWith("HTTP/1.1 101")) {
                    return true;
                }
                qsizetype length = 0;
                for (const QByteArray &line : head.split('\n')) {
                    if (line.toLower().startsWith("content-length:")) {
                        length = line.mid(15).trimmed().toLongLong();
                    }
                }
                return data.size() >= end + 4 + length;
            },
            timeoutMs);
    const qsizetype end = data.indexOf("\r\n\r\n");
    response.head = end < 0 ? data : data.left(end);
    response.body = end < 0 ? QByteArray() : data.mid(end + 4);
    const QList<QByteArray> statusLine = response.head.split(' ');
    response.status = statusLine.size() > 1 ? statusLine.at(1).toInt() : 0;
    return response;
}

} // namespace rt::testsupport
