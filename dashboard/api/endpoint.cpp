#include "dashboard/api/endpoint.h"

#include <QHostAddress>

namespace rt::dashboard {

namespace {

const QString LiveFeedPath = QStringLiteral("/api/admin/live/websocket");

QString identity(const QUrl &base)
{
    return base.host().toLower() + u':'
            + QString::number(base.port(base.scheme() == QLatin1String("https") ? 443 : 80));
}

} // namespace

std::optional<QUrl> nodeBaseUrl(const QString &operatorUrl)
{
    QString text = operatorUrl.trimmed();
    if (text.isEmpty()) {
        return std::nullopt;
    }
    if (!text.contains(QLatin1String("://"))) {
        text.prepend(QLatin1String("http://"));
    }
    const QUrl url(text, QUrl::StrictMode);
    if (!url.isValid() || url.host().isEmpty() || !url.userInfo().isEmpty()) {
        return std::nullopt;
    }
    const QString scheme = url.scheme().toLower();
    QUrl base;
    if (scheme == QLatin1String("http") || scheme == QLatin1String("ws")) {
        base.setScheme(QStringLiteral("http"));
    } else if (scheme == QLatin1String("https") || scheme == QLatin1String("wss")) {
        base.setScheme(QStringLiteral("https"));
    } else {
        return std::nullopt;
    }
    base.setHost(url.host());
    base.setPort(url.port());
    return base;
}

std::optional<QUrl> nodeBaseUrlFromAddress(const QString &clientAddress, const QUrl &operatorBase)
{
    const QString address = clientAddress.trimmed();
    if (address.isEmpty()) {
        return std::nullopt;
    }
    std::optional<QUrl> base = address.contains(QLatin1String("://"))
            ? nodeBaseUrl(address)
            : nodeBaseUrl(operatorBase.scheme() + QLatin1String("://") + address);
    if (!base) {
        return std::nullopt;
    }
    // A node bound to every interface may advertise that; nobody can dial it.
    const QHostAddress host(base->host());
    if (host.isEqual(QHostAddress(QHostAddress::AnyIPv4))
        || host.isEqual(QHostAddress(QHostAddress::AnyIPv6))) {
        return std::nullopt;
    }
    return base;
}

QUrl adminHttpUrl(const QUrl &base, const QString &path, const QUrlQuery &query)
{
    QUrl url = base;
    url.setPath(path);
    if (!query.isEmpty()) {
        url.setQuery(query);
    }
    return url;
}

QUrl liveFeedUrl(const QUrl &base)
{
    QUrl url = base;
    url.setScheme(base.scheme() == QLatin1String("https") ? QStringLiteral("wss")
                                                          : QStringLiteral("ws"));
    url.setPath(LiveFeedPath);
    url.setQuery(QStringLiteral("vsn=1.0.0"));
    return url;
}

QString endpointLabel(const QUrl &base)
{
    return base.authority();
}

QList<QUrl> mergeEndpoints(const QUrl &operatorBase, const QList<QUrl> &others)
{
    QList<QUrl> merged;
    QStringList seen;
    const auto add = [&merged, &seen](const QUrl &url) {
        if (url.isEmpty()) {
            return;
        }
        const QString key = identity(url);
        if (!seen.contains(key)) {
            seen.append(key);
            merged.append(url);
        }
    };
    add(operatorBase);
    for (const QUrl &url : others) {
        add(url);
    }
    return merged;
}

} // namespace rt::dashboard
