#include "dashboard/api/admin_reply.h"

#include "dashboard/api/admin_client.h"

#include <QFutureWatcher>
#include <QNetworkReply>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <utility>

namespace rt::dashboard {

namespace {

// A call that got no HTTP answer: why, as far as the dashboard acts on it.
ApiError::Kind networkErrorKind(QNetworkReply::NetworkError error)
{
    switch (error) {
    case QNetworkReply::TimeoutError:
        return ApiError::Kind::Timeout;
    case QNetworkReply::SslHandshakeFailedError:
        return ApiError::Kind::Untrusted;
    default:
        return ApiError::Kind::Network;
    }
}

} // namespace

AdminReply::AdminReply(AdminClient *client) : QObject(client), m_client(client) { }

AdminReply::~AdminReply()
{
    if (m_reply) {
        m_reply->disconnect(this);
        m_reply->abort();
        m_reply->deleteLater();
    }
}

void AdminReply::abort()
{
    if (m_finished) {
        return;
    }
    m_abortedByUs = true;
    if (m_finishDeferred) {
        // The answer arrived and is still being interpreted: that result will be dropped.
        fail(AdminResponses::networkError(ApiError::Kind::Canceled, QString()));
        finish();
        return;
    }
    // A reply that already failed has its finished() on the way; aborting it again only makes
    // Qt complain.
    if (m_reply && m_reply->error() == QNetworkReply::NoError) {
        m_reply->abort(); // finished() follows at once
    }
}

void AdminReply::attach(QNetworkReply *reply)
{
    m_reply = reply;
    m_sent = true;
    connect(reply, &QNetworkReply::readyRead, this, [this, reply] { readAvailable(reply); });
    connect(reply, &QNetworkReply::finished, this, &AdminReply::onNetworkReplyFinished);
}

void AdminReply::readAvailable(QNetworkReply *reply)
{
    // One read of exactly what is there: readAll() grows its result chunk by chunk, copying
    // megabytes over and over.
    const qint64 available = reply->bytesAvailable();
    if (available <= 0) {
        return;
    }
    const qsizetype offset = m_body.size();
    m_body.resize(offset + qsizetype(available));
    const qint64 read = reply->read(m_body.data() + offset, available);
    m_body.truncate(offset + qsizetype(std::max<qint64>(read, 0)));
}

void AdminReply::failLater(const ApiError &error)
{
    QTimer::singleShot(0, this, [this, error] {
        fail(error);
        finish();
    });
}

void AdminReply::fail(const ApiError &error)
{
    m_error = error;
}

void AdminReply::onNetworkReplyFinished()
{
    QNetworkReply *reply = m_reply;
    if (!reply) {
        return;
    }
    m_reply = nullptr;
    reply->deleteLater();
    const QVariant status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (status.isValid() && status.toInt() > 0) {
        readAvailable(reply);
        interpret(status.toInt(), std::exchange(m_body, QByteArray()));
        if (m_finishDeferred) {
            return;
        }
    } else if (reply->error() == QNetworkReply::OperationCanceledError) {
        // Qt reports a transfer timeout as a cancellation too.
        fail(AdminResponses::networkError(m_abortedByUs ? ApiError::Kind::Canceled
                                                        : ApiError::Kind::Timeout,
                                          reply->errorString()));
    } else {
        fail(AdminResponses::networkError(networkErrorKind(reply->error()), reply->errorString()));
    }
    finish();
}

void AdminReply::finishDeferred()
{
    finish();
}

void AdminReply::finish()
{
    if (m_finished) {
        return;
    }
    m_finished = true;
    if (m_error) {
        Q_EMIT failed(*m_error);
        Q_EMIT m_client->requestFailed(*m_error);
    }
    Q_EMIT finished();
    m_client->replyFinished(this);
    deleteLater();
}

void SnapshotReply::interpret(int status, const QByteArray &body)
{
    // What the pool thread hands back (QFuture wants a default-constructible value).
    struct Parsed
    {
        std::optional<api::ClusterSnapshot> snapshot;
        ApiError error;
    };
    deferFinish();
    auto *watcher = new QFutureWatcher<Parsed>(this); // child, dies with the reply
    connect(watcher, &QFutureWatcher<Parsed>::finished, this, [this, watcher] {
        watcher->deleteLater();
        if (isFinished()) {
            return; // aborted meanwhile
        }
        const Parsed parsed = watcher->result();
        if (parsed.snapshot) {
            Q_EMIT succeeded(*parsed.snapshot);
        } else {
            fail(parsed.error);
        }
        finishDeferred();
    });
    watcher->setFuture(QtConcurrent::run([status, body] {
        Result<api::ClusterSnapshot, ApiError> snapshot = AdminResponses::snapshot(status, body);
        Parsed parsed;
        if (snapshot) {
            parsed.snapshot = std::move(snapshot).value();
        } else {
            parsed.error = snapshot.error();
        }
        return parsed;
    }));
}

void ConfigListReply::interpret(int status, const QByteArray &body)
{
    Result<ConfigListing, ApiError> listing = AdminResponses::configListing(status, body);
    if (!listing) {
        fail(listing.error());
        return;
    }
    Q_EMIT succeeded(*listing);
}

ConfigEntryReply::ConfigEntryReply(AdminClient *client, QString key)
    : AdminReply(client),
      m_key(std::move(key))
{ }

void ConfigEntryReply::interpret(int status, const QByteArray &body)
{
    Result<ConfigListing, ApiError> listing = AdminResponses::configListing(status, body);
    if (!listing) {
        fail(listing.error());
        return;
    }
    for (const api::ConfigValue &entry : std::as_const(listing->entries)) {
        if (entry.key == m_key) {
            Q_EMIT succeeded(entry, true, listing->revision);
            return;
        }
    }
    api::ConfigValue absent;
    absent.key = m_key;
    Q_EMIT succeeded(absent, false, listing->revision);
}

ConfigWriteReply::ConfigWriteReply(AdminClient *client, QString key)
    : AdminReply(client),
      m_key(std::move(key))
{ }

void ConfigWriteReply::interpret(int status, const QByteArray &body)
{
    const ConfigWriteOutcome outcome = AdminResponses::configWrite(m_key, status, body);
    if (const auto *done = std::get_if<ConfigWritten>(&outcome)) {
        Q_EMIT written(m_key, done->revision);
    } else if (const auto *conflict = std::get_if<ConfigConflict>(&outcome)) {
        Q_EMIT conflicted(*conflict);
    } else {
        fail(std::get<ApiError>(outcome));
    }
}

void TenantListReply::interpret(int status, const QByteArray &body)
{
    Result<QList<api::TenantSummary>, ApiError> tenants = AdminResponses::tenantList(status, body);
    if (!tenants) {
        fail(tenants.error());
        return;
    }
    Q_EMIT succeeded(*tenants);
}

void TenantReply::interpret(int status, const QByteArray &body)
{
    Result<api::TenantSummary, ApiError> tenant = AdminResponses::tenant(status, body);
    if (!tenant) {
        fail(tenant.error());
        return;
    }
    Q_EMIT succeeded(*tenant);
}

void EmptyReply::interpret(int status, const QByteArray &body)
{
    if (std::optional<ApiError> error = AdminResponses::noContent(status, body)) {
        fail(*error);
        return;
    }
    Q_EMIT succeeded();
}

} // namespace rt::dashboard
