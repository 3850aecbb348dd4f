#pragma once

#include "server/cluster/etcd/etcd_json.h"

#include <QList>
#include <QNetworkAccessManager>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QSslConfiguration>
#include <QTimer>
#include <QUrl>

#include <functional>
#include <optional>

class QNetworkReply;

namespace rt::cluster::etcd {

class EtcdWatch;

// How the client reaches etcd: TLS for https:// endpoints (the CA etcd is verified against and,
// for etcd's --client-cert-auth, this node's certificate), and etcd v3 authentication (a user
// whose token goes with every call and watch, renewed when etcd refuses it).
struct EtcdSecurity
{
    std::optional<QSslConfiguration> tls; // none: Qt's defaults (the system's CAs)
    QString user; // empty: no authentication
    QString password;

    bool authenticates() const { return !user.isEmpty(); }
};

// A client of etcd's v3 JSON gateway (POST /v3/... with JSON bodies) over QNetworkAccessManager.
// Calls return at once; each callback is called exactly once, from the event loop (never from
// inside the call), unless the client is destroyed first (then it is dropped).
//
// Several endpoints (ETCD_ENDPOINTS) are used in turn: the client talks to one of them and moves
// to the next when a request gets no answer. A request that could not even be delivered
// (connection refused, unknown host) is retried on the other endpoints at once; one that may
// have reached etcd (timeout, reset) fails with a Network error instead, since a transaction
// must not run twice behind the caller's back.
//
// Lives on the cluster thread; use it only there.
class EtcdClient : public QObject
{
    Q_OBJECT
public:
    explicit EtcdClient(QList<QUrl> endpoints, EtcdSecurity security = {},
                        QObject *parent = nullptr);
    ~EtcdClient() override;

    // "http://h1:2379,http://h2:2379" → URLs (http or https with a host); an error names the
    // bad entry.
    static Result<QList<QUrl>> parseEndpoints(const QString &commaSeparated);

    void setRequestTimeoutMs(int timeoutMs) { m_timeoutMs = timeoutMs; }
    int requestTimeoutMs() const { return m_timeoutMs; }
    QUrl currentEndpoint() const;
    // Moves to the next endpoint (after a failure seen by someone else, e.g. a watch).
    void rotateEndpoint();

    template <typename T>
    using Callback = std::function<void(EtcdResult<T>)>;

    void range(const QByteArray &key, const QByteArray &rangeEnd, Callback<RangeResponse> done);
    void put(const QByteArray &key, const QByteArray &value, qint64 lease,
             Callback<PutResponse> done);
    void deleteRange(const QByteArray &key, const QByteArray &rangeEnd,
                     Callback<DeleteRangeResponse> done);
    void txn(const TxnRequest &request, Callback<TxnResponse> done);
    void leaseGrant(qint64 ttlSeconds, Callback<LeaseGrantResponse> done);
    // A lost lease answers with EtcdError::Kind::LeaseLost.
    void leaseKeepAlive(qint64 lease, Callback<KeepAliveResponse> done);
    void leaseRevoke(qint64 lease, Callback<qint64> done);
    void leaseTimeToLive(qint64 lease, Callback<LeaseTimeToLiveResponse> done);

    // Opens a watch stream (POST /v3/watch, one create_request) on the current endpoint; used by
    // EtcdWatch. The caller owns the reply.
    QNetworkReply *openWatchStream(const QByteArray &createRequest);

    // Calls `ready` once a token is at hand (at once without authentication), or with why none
    // could be had. Later calls while one is being fetched wait for the same answer.
    void withToken(std::function<void(std::optional<EtcdError>)> ready);
    // etcd refused `token`: the next call fetches a new one (unless that happened already).
    void dropToken(const QByteArray &token);
    const QByteArray &token() const { return m_token; }

private:
    using BodyCallback = std::function<void(EtcdResult<QByteArray>)>;
    void call(const QString &path, const QByteArray &body, BodyCallback done, int attempt = 0,
              bool renewToken = true);
    void send(const QString &path, const QByteArray &body, BodyCallback done, int attempt,
              bool renewToken);
    void authenticate();
    QNetworkRequest request(const QString &path, bool stream) const;

    QNetworkAccessManager m_network;
    QList<QUrl> m_endpoints;
    EtcdSecurity m_security;
    QByteArray m_token; // the current auth token; empty: none yet
    QList<std::function<void(std::optional<EtcdError>)>> m_tokenWaiters; // while authenticating
    int m_current = 0;
    int m_timeoutMs = 5000;
    QSet<QNetworkReply *> m_inFlight;
};

// A watch over a key range that survives dropped streams: it reconnects (with backoff, trying
// the endpoints in turn) and resumes at the revision after the last one it delivered, so no
// event is missed and none is delivered twice. If that revision has been compacted away, it
// emits compacted() and stops: the owner must reload with a range read and start a new watch.
//
// Lives on the cluster thread, like its EtcdClient (which must outlive it).
class EtcdWatch : public QObject
{
    Q_OBJECT
public:
    // startRevision: the first revision to deliver (0 = from now).
    EtcdWatch(EtcdClient &client, QByteArray key, QByteArray rangeEnd, qint64 startRevision,
              QObject *parent = nullptr);
    ~EtcdWatch() override;

    void start();
    void stop();
    bool isEstablished() const { return m_established; }
    // The first revision not delivered yet.
    qint64 nextRevision() const { return m_nextRevision; }

    // A new stream at once, resuming at nextRevision(), without interrupted(): for when the
    // network was out and the old stream may sit on a connection that no longer carries data
    // (nothing tells it: a watch may rightly be silent); established() follows.
    void reopen();
    // Test hooks: drop the stream as a network failure would; while paused, no reconnect.
    void dropStreamForTesting();
    void setPausedForTesting(bool paused);

Q_SIGNALS:
    void established();
    // Events of one revision or more, in revision order; `revision` is the stream's header
    // revision (everything up to it has been delivered).
    void eventsReceived(const QList<rt::cluster::etcd::WatchEvent> &events, qint64 revision);
    void interrupted(const QString &reason);
    void compacted(qint64 compactRevision);

private:
    void connectStream();
    void openStream();
    void onReadyRead();
    void onFinished();
    void handleLine(const QByteArray &line);
    void lost(const QString &reason);
    void closeStream();

    EtcdClient &m_client;
    QByteArray m_key;
    QByteArray m_rangeEnd;
    qint64 m_nextRevision = 0;
    QPointer<QNetworkReply> m_reply;
    NdjsonSplitter m_splitter;
    QTimer m_retryTimer;
    int m_backoffMs = 0;
    bool m_running = false;
    bool m_established = false;
    bool m_paused = false;
    bool m_compacted = false;
    bool m_waitingForToken = false;
    QByteArray m_streamToken; // the token the open stream was started with
};

} // namespace rt::cluster::etcd
