#include "server/cluster/etcd/etcd_client.h"

#include "server/cluster/logging.h"

#include <QNetworkReply>
#include <QNetworkRequest>

#include <utility>

namespace rt::cluster::etcd {

namespace {

constexpr int FirstRetryMs = 100;
constexpr int MaxRetryMs = 2000;

template <typename T>
std::function<void(EtcdResult<QByteArray>)> decodeWith(EtcdClient::Callback<T> done,
                                                       EtcdResult<T> (*decoder)(QByteArrayView))
{
    return [done = std::move(done), decoder](EtcdResult<QByteArray> body) {
        if (!body) {
            done(body.error());
            return;
        }
        done(decoder(*body));
    };
}

} // namespace

EtcdClient::EtcdClient(QList<QUrl> endpoints, EtcdSecurity security, QObject *parent)
    : QObject(parent),
      m_endpoints(std::move(endpoints)),
      m_security(std::move(security))
{
    Q_ASSERT(!m_endpoints.isEmpty());
    m_network.setAutoDeleteReplies(false);
}

EtcdClient::~EtcdClient()
{
    // Pending callbacks are dropped: disconnect before aborting, since abort() may emit
    // finished() synchronously.
    const QSet<QNetworkReply *> replies = m_inFlight;
    for (QNetworkReply *reply : replies) {
        disconnect(reply, nullptr, this, nullptr);
        reply->abort();
        delete reply;
    }
}

Result<QList<QUrl>> EtcdClient::parseEndpoints(const QString &commaSeparated)
{
    QList<QUrl> endpoints;
    const QStringList parts = commaSeparated.split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (const QString &part : parts) {
        const QString trimmed = part.trimmed();
        const QUrl url(trimmed, QUrl::StrictMode);
        if (!url.isValid() || url.host().isEmpty()
            || (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https"))) {
            return Error{ QStringLiteral("ETCD_ENDPOINTS: \"%1\" is not an http(s)://host:port URL")
                                  .arg(trimmed) };
        }
        QUrl endpoint = url;
        QString path = endpoint.path();
        while (path.endsWith(QLatin1Char('/'))) {
            path.chop(1); // requests append "/v3/..."
        }
        endpoint.setPath(path);
        endpoints.append(endpoint);
    }
    if (endpoints.isEmpty()) {
        return Error{ QStringLiteral("ETCD_ENDPOINTS names no endpoint") };
    }
    return endpoints;
}

QUrl EtcdClient::currentEndpoint() const
{
    return m_endpoints.at(m_current);
}

void EtcdClient::rotateEndpoint()
{
    if (m_endpoints.size() > 1) {
        m_current = (m_current + 1) % int(m_endpoints.size());
        qCDebug(lcCluster) << "etcd: now using endpoint" << currentEndpoint();
    }
}

QNetworkRequest EtcdClient::request(const QString &path, bool stream) const
{
    QUrl url = currentEndpoint();
    url.setPath(url.path() + path);
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    if (!stream) {
        request.setTransferTimeout(m_timeoutMs);
    }
    if (m_security.tls) {
        request.setSslConfiguration(*m_security.tls);
    }
    // HTTP/1.1, one connection per request in flight: over https Qt would otherwise speak HTTP/2
    // (etcd offers it), every call and watch on one TCP connection, and a request that timed out
    // in a partition leaves that connection in TCP's retransmission backoff, so after the heal
    // the node stayed unavailable for as long again (25 s after 30 s). An aborted HTTP/1.1
    // request closes its own connection, and the next one dials afresh.
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    if (!m_token.isEmpty() && path != QLatin1String("/v3/auth/authenticate")) {
        request.setRawHeader(QByteArrayLiteral("Authorization"), m_token);
    }
    return request;
}

void EtcdClient::withToken(std::function<void(std::optional<EtcdError>)> ready)
{
    if (!m_security.authenticates() || !m_token.isEmpty()) {
        ready(std::nullopt);
        return;
    }
    m_tokenWaiters.append(std::move(ready));
    if (m_tokenWaiters.size() == 1) {
        authenticate();
    }
}

void EtcdClient::dropToken(const QByteArray &token)
{
    if (token == m_token) {
        m_token.clear();
    }
}

// POST /v3/auth/authenticate; every waiter learns the outcome.
void EtcdClient::authenticate()
{
    const auto finish = [this](const std::optional<EtcdError> &failure) {
        const QList<std::function<void(std::optional<EtcdError>)>> waiters =
                std::exchange(m_tokenWaiters, {});
        for (const auto &waiter : waiters) {
            waiter(failure);
        }
    };
    send(
            QStringLiteral("/v3/auth/authenticate"),
            encodeAuthenticate(m_security.user, m_security.password),
            [this, finish](EtcdResult<QByteArray> body) {
                EtcdResult<QByteArray> token = body ? decodeAuthenticate(*body) : body.error();
                if (!token) {
                    EtcdError error = token.error();
                    error.message = QStringLiteral("etcd authentication as %1 failed: %2")
                                            .arg(m_security.user, error.message);
                    finish(error);
                    return;
                }
                m_token = std::move(token).value();
                finish(std::nullopt);
            },
            0, false);
}

void EtcdClient::call(const QString &path, const QByteArray &body, BodyCallback done, int attempt,
                      bool renewToken)
{
    if (m_security.authenticates() && m_token.isEmpty()) {
        withToken([this, path, body, attempt, renewToken,
                   done = std::move(done)](std::optional<EtcdError> failure) mutable {
            if (failure) {
                done(*failure);
                return;
            }
            send(path, body, std::move(done), attempt, renewToken);
        });
        return;
    }
    send(path, body, std::move(done), attempt, renewToken);
}

void EtcdClient::send(const QString &path, const QByteArray &body, BodyCallback done, int attempt,
                      bool renewToken)
{
    QNetworkReply *reply = m_network.post(request(path, false), body);
    m_inFlight.insert(reply);
    connect(reply, &QNetworkReply::finished, this,
            [this, reply, path, body, attempt, renewToken, sentToken = m_token,
             done = std::move(done)]() mutable {
                m_inFlight.remove(reply);
                reply->deleteLater();
                const QVariant status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
                if (!status.isValid()) {
                    const QNetworkReply::NetworkError error = reply->error();
                    const QString message = QStringLiteral("%1: %2").arg(
                            currentEndpoint().toString(), reply->errorString());
                    rotateEndpoint();
                    // Not delivered at all: safe to try the next endpoint now.
                    const bool undelivered = error == QNetworkReply::ConnectionRefusedError
                            || error == QNetworkReply::HostNotFoundError;
                    if (undelivered && attempt + 1 < m_endpoints.size()) {
                        send(path, body, std::move(done), attempt + 1, renewToken);
                        return;
                    }
                    done(EtcdError{ EtcdError::Kind::Network, 0, message });
                    return;
                }
                const int code = status.toInt();
                QByteArray answer = reply->readAll();
                if (code >= 500 && !answer.startsWith('{')) {
                    done(EtcdError{ EtcdError::Kind::Http, code,
                                    QStringLiteral("etcd answered HTTP %1").arg(code) });
                    return;
                }
                const std::optional<EtcdError> refused = errorOf(answer);
                if (renewToken && m_security.authenticates() && refused && isStaleToken(*refused)) {
                    // The token expired (or etcd restarted): once more with a new one. The
                    // call was refused before it ran, so repeating it cannot run it twice.
                    qCDebug(lcCluster) << "etcd: token refused, authenticating again";
                    dropToken(sentToken);
                    call(path, body, std::move(done), attempt, false);
                    return;
                }
                done(std::move(answer));
            });
}

void EtcdClient::range(const QByteArray &key, const QByteArray &rangeEnd,
                       Callback<RangeResponse> done)
{
    call(QStringLiteral("/v3/kv/range"), encodeRange(key, rangeEnd),
         decodeWith(std::move(done), &decodeRange));
}

void EtcdClient::put(const QByteArray &key, const QByteArray &value, qint64 lease,
                     Callback<PutResponse> done)
{
    call(QStringLiteral("/v3/kv/put"), encodePut(key, value, lease),
         decodeWith(std::move(done), &decodePut));
}

void EtcdClient::deleteRange(const QByteArray &key, const QByteArray &rangeEnd,
                             Callback<DeleteRangeResponse> done)
{
    call(QStringLiteral("/v3/kv/deleterange"), encodeDeleteRange(key, rangeEnd),
         decodeWith(std::move(done), &decodeDeleteRange));
}

void EtcdClient::txn(const TxnRequest &request, Callback<TxnResponse> done)
{
    call(QStringLiteral("/v3/kv/txn"), encodeTxn(request), decodeWith(std::move(done), &decodeTxn));
}

void EtcdClient::leaseGrant(qint64 ttlSeconds, Callback<LeaseGrantResponse> done)
{
    call(QStringLiteral("/v3/lease/grant"), encodeLeaseGrant(ttlSeconds),
         decodeWith(std::move(done), &decodeLeaseGrant));
}

void EtcdClient::leaseKeepAlive(qint64 lease, Callback<KeepAliveResponse> done)
{
    call(QStringLiteral("/v3/lease/keepalive"), encodeLeaseId(lease),
         decodeWith(std::move(done), &decodeKeepAlive));
}

void EtcdClient::leaseRevoke(qint64 lease, Callback<qint64> done)
{
    call(QStringLiteral("/v3/lease/revoke"), encodeLeaseId(lease),
         decodeWith(std::move(done), &decodeLeaseRevoke));
}

void EtcdClient::leaseTimeToLive(qint64 lease, Callback<LeaseTimeToLiveResponse> done)
{
    call(QStringLiteral("/v3/lease/timetolive"), encodeLeaseId(lease),
         decodeWith(std::move(done), &decodeLeaseTimeToLive));
}

QNetworkReply *EtcdClient::openWatchStream(const QByteArray &createRequest)
{
    return m_network.post(request(QStringLiteral("/v3/watch"), true), createRequest);
}

// --- EtcdWatch -----------------------------------------------------------------------------------

EtcdWatch::EtcdWatch(EtcdClient &client, QByteArray key, QByteArray rangeEnd, qint64 startRevision,
                     QObject *parent)
    : QObject(parent),
      m_client(client),
      m_key(std::move(key)),
      m_rangeEnd(std::move(rangeEnd)),
      m_nextRevision(startRevision)
{
    m_retryTimer.setSingleShot(true);
    connect(&m_retryTimer, &QTimer::timeout, this, &EtcdWatch::connectStream);
}

EtcdWatch::~EtcdWatch()
{
    closeStream();
}

void EtcdWatch::start()
{
    if (m_running || m_compacted) {
        return;
    }
    m_running = true;
    connectStream();
}

void EtcdWatch::stop()
{
    m_running = false;
    m_retryTimer.stop();
    closeStream();
    m_established = false;
}

void EtcdWatch::reopen()
{
    if (!m_running) {
        return;
    }
    closeStream();
    m_established = false;
    m_backoffMs = 0;
    m_retryTimer.stop();
    connectStream();
}

void EtcdWatch::dropStreamForTesting()
{
    if (m_reply) {
        lost(QStringLiteral("watch stream dropped (test hook)"));
    }
}

void EtcdWatch::setPausedForTesting(bool paused)
{
    m_paused = paused;
    if (!paused && m_running && !m_reply && !m_retryTimer.isActive()) {
        connectStream();
    }
}

void EtcdWatch::connectStream()
{
    if (!m_running || m_paused || m_reply || m_waitingForToken) {
        return;
    }
    m_splitter.reset();
    m_established = false;
    if (m_client.token().isEmpty()) {
        // With authentication, a stream needs a token first (without, this returns at once).
        m_waitingForToken = true;
        m_client.withToken([watch = QPointer<EtcdWatch>(this)](std::optional<EtcdError> failure) {
            if (!watch) {
                return;
            }
            watch->m_waitingForToken = false;
            if (failure) {
                watch->lost(failure->message);
                return;
            }
            watch->openStream();
        });
        return;
    }
    openStream();
}

void EtcdWatch::openStream()
{
    if (!m_running || m_paused || m_reply) {
        return;
    }
    m_streamToken = m_client.token();
    m_reply = m_client.openWatchStream(encodeWatchCreate(m_key, m_rangeEnd, m_nextRevision));
    connect(m_reply.data(), &QNetworkReply::readyRead, this, &EtcdWatch::onReadyRead);
    connect(m_reply.data(), &QNetworkReply::finished, this, &EtcdWatch::onFinished);
}

void EtcdWatch::onReadyRead()
{
    QNetworkReply *reply = m_reply.data();
    if (!reply) {
        return;
    }
    const QVariant status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (status.isValid() && status.toInt() != 200) {
        lost(QStringLiteral("watch answered HTTP %1").arg(status.toInt()));
        return;
    }
    const QList<QByteArray> lines = m_splitter.feed(reply->readAll());
    for (const QByteArray &line : lines) {
        // A receiver may have stopped or dropped the stream meanwhile: the rest is stale.
        if (m_reply.data() != reply) {
            return;
        }
        handleLine(line);
    }
    if (m_splitter.failed() && m_reply.data() == reply) {
        lost(QStringLiteral("watch message longer than the limit"));
    }
}

void EtcdWatch::onFinished()
{
    QNetworkReply *reply = m_reply.data();
    if (!reply) {
        return;
    }
    onReadyRead(); // whatever arrived with the end of the stream
    if (m_reply.data() != reply) {
        return;
    }
    lost(reply->error() != QNetworkReply::NoError ? reply->errorString()
                                                  : QStringLiteral("etcd closed the watch stream"));
}

void EtcdWatch::handleLine(const QByteArray &line)
{
    const auto message = decodeWatchResponse(line);
    if (!message) {
        if (isStaleToken(message.error())) {
            m_client.dropToken(m_streamToken); // the reconnect authenticates again
        }
        lost(QStringLiteral("watch: ") + message.error().message);
        return;
    }
    if (message->canceled) {
        if (message->compactRevision > 0) {
            qCWarning(lcCluster) << "etcd: watch from revision" << m_nextRevision
                                 << "was compacted away (compact revision"
                                 << message->compactRevision << "); the owner reloads";
            m_compacted = true;
            stop();
            Q_EMIT compacted(message->compactRevision);
            return;
        }
        lost(QStringLiteral("watch canceled by etcd: ") + message->cancelReason);
        return;
    }
    if (message->created) {
        m_established = true;
        m_backoffMs = 0;
        if (m_nextRevision == 0) {
            m_nextRevision = message->revision + 1;
        }
        Q_EMIT established();
        return;
    }
    if (message->events.isEmpty()) {
        // A progress notification: everything up to its revision has been delivered.
        m_nextRevision = std::max(m_nextRevision, message->revision + 1);
        return;
    }
    QList<WatchEvent> fresh;
    qint64 last = message->revision;
    for (const WatchEvent &event : message->events) {
        last = std::max(last, event.kv.modRevision);
        if (event.kv.modRevision >= m_nextRevision) { // never deliver a revision twice
            fresh.append(event);
        }
    }
    m_nextRevision = std::max(m_nextRevision, last + 1);
    if (!fresh.isEmpty()) {
        Q_EMIT eventsReceived(fresh, message->revision);
    }
}

void EtcdWatch::lost(const QString &reason)
{
    closeStream();
    m_established = false;
    m_client.rotateEndpoint();
    qCDebug(lcCluster).noquote() << "etcd: watch interrupted:" << reason << "- resuming at revision"
                                 << m_nextRevision;
    m_backoffMs = m_backoffMs == 0 ? FirstRetryMs : std::min(m_backoffMs * 2, MaxRetryMs);
    if (m_running) {
        m_retryTimer.start(m_backoffMs);
    }
    Q_EMIT interrupted(reason);
}

void EtcdWatch::closeStream()
{
    if (QNetworkReply *reply = m_reply.data()) {
        m_reply = nullptr;
        disconnect(reply, nullptr, this, nullptr);
        reply->abort();
        reply->deleteLater();
    }
}

} // namespace rt::cluster::etcd
