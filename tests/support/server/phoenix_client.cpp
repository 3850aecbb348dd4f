#include "tests/support/server/phoenix_client.h"

#include <QTest>

namespace rt::testsupport {

PhoenixClient::PhoenixClient(const QUrl &url, QObject *parent) : QObject(parent), m_url(url)
{
    connect(&m_socket, &QWebSocket::textMessageReceived, this,
            [this](const QString &message) { texts.append(message.toUtf8()); });
    connect(&m_socket, &QWebSocket::binaryMessageReceived, this,
            [this](const QByteArray &message) { binaries.append(message); });
}

bool PhoenixClient::open(int timeoutMs)
{
    m_socket.open(m_url);
    return QTest::qWaitFor([this] { return isConnected(); }, timeoutMs);
}

void PhoenixClient::sendText(const QByteArray &text)
{
    m_socket.sendTextMessage(QString::fromUtf8(text));
}

void PhoenixClient::sendBinary(const QByteArray &bytes)
{
    m_socket.sendBinaryMessage(bytes);
}

void PhoenixClient::close()
{
    m_socket.close();
}

QByteArray PhoenixClient::waitForText(const std::function<bool(const QByteArray &)> &match,
                                      int timeoutMs)
{
    QByteArray found;
    [[maybe_unused]] const bool matched = QTest::qWaitFor(
            [&] {
                for (qsizetype i = 0; i < texts.size(); ++i) {
                    if (match(texts.at(i))) {
                        found = texts.takeAt(i);
                        return true;
                    }
                }
                return false;
            },
            timeoutMs);
    return found;
}

QByteArray PhoenixClient::waitForText(const QByteArray &needle, int timeoutMs)
{
    return waitForText([&needle](const QByteArray &text) { return text.contains(needle); },
                       timeoutMs);
}

QByteArray PhoenixClient::waitForBinary(int timeoutMs)
{
    if (QTest::qWaitFor([this] { return !binaries.isEmpty(); }, timeoutMs)) {
        return binaries.takeFirst();
    }
    return {};
}

bool PhoenixClient::staysSilent(const QByteArray &needle, int ms)
{
    QTest::qWait(ms);
    for (const QByteArray &text : std::as_const(texts)) {
        if (text.contains(needle)) {
            return false;
        }
    }
    return true;
}

bool PhoenixClient::waitForDisconnect(int timeoutMs)
{
    return QTest::qWaitFor([this] { return m_socket.state() == QAbstractSocket::UnconnectedState; },
                           timeoutMs);
}

} // namespace rt::testsupport
