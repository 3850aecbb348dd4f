#include "tests/support/server/phoenix_client.h"

#include <QTest>
#include <QUrlQuery>

#include <algorithm>

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

bool PhoenixClient::staysSilent(const QByteArray &needle)
{
    const QByteArray ref = "silence-sentinel-" + QByteArray::number(++m_sentinels);
    const bool v2 = QUrlQuery(m_url).queryItemValue(QStringLiteral("vsn")).startsWith(u'2');
    const QByteArray heartbeat = v2
            ? QByteArray("[null,\"" + ref + "\",\"phoenix\",\"heartbeat\",{}]")
            : QByteArray("{\"topic\":\"phoenix\",\"event\":\"heartbeat\","
                         "\"payload\":{},\"ref\":\""
                         + ref + "\"}");
    sendText(heartbeat);
    const QByteArray quoted = QByteArray('"' + ref + '"');
    if (!QTest::qWaitFor(
                [&] {
                    return std::any_of(texts.cbegin(), texts.cend(), [&](const QByteArray &text) {
                        return text.contains(quoted);
                    });
                },
                5000)) {
        return false;
    }
    for (const QByteArray &text : std::as_const(texts)) {
        if (text.contains(quoted)) {
            break; // what came after the sentinel is not this question's
        }
        if (text.contains(needle)) {
            return false;
        }
    }
    texts.removeIf([&](const QByteArray &text) { return text.contains(quoted); });
    return true;
}

bool PhoenixClient::waitForDisconnect(int timeoutMs)
{
    return QTest::qWaitFor([this] { return m_socket.state() == QAbstractSocket::UnconnectedState; },
                           timeoutMs);
}

} // namespace rt::testsupport
