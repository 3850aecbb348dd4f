#pragma once

#include "dashboard/api/admin_responses.h"
#include "shared/api/cluster_snapshot.h"
#include "shared/api/tenant_summary.h"

#include <QByteArray>
#include <QObject>
#include <QPointer>

#include <optional>

class QNetworkReply;

namespace rt::dashboard {

class AdminClient;

// One call of AdminClient, finished exactly once with its typed success signal or failed().
// Owned by the AdminClient; it deletes itself (deleteLater) after finished(), so keep a
// QPointer if it must be referred to later. Signals are never emitted before the call that
// created the reply has returned: connecting right after the call is safe. GUI thread.
class AdminReply : public QObject
{
    Q_OBJECT
public:
    explicit AdminReply(AdminClient *client);
    ~AdminReply() override;

    bool isFinished() const { return m_finished; }
    // Set once the call failed.
    const std::optional<ApiError> &error() const { return m_error; }
    // Gives up: failed() with kind Canceled follows (unless it already finished).
    void abort();

Q_SIGNALS:
    void failed(const rt::dashboard::ApiError &error);
    // After the success signal or failed(), in every case.
    void finished();

protected:
    // The HTTP answer: emit the typed success signal, or call fail().
    virtual void interpret(int status, const QByteArray &body) = 0;
    void fail(const ApiError &error);
    // For an interpret() that goes on elsewhere (a large body parsed off the GUI thread): the
    // reply finishes only at finishDeferred(), or at abort() before it (failed(Canceled)).
    void deferFinish() { m_finishDeferred = true; }
    void finishDeferred();

private:
    friend class AdminClient;
    void readAvailable(QNetworkReply *reply); // appends what `reply` has to m_body
    void attach(QNetworkReply *reply);
    void failLater(const ApiError &error); // for calls refused before anything was sent
    void onNetworkReplyFinished();
    void finish();

    AdminClient *m_client; // the parent
    QPointer<QNetworkReply> m_reply;
    // The body as it arrives (readAvailable()).
    QByteArray m_body;
    std::optional<ApiError> m_error;
    bool m_finished = false;
    bool m_abortedByUs = false;
    bool m_sent = false; // counted in AdminClient::pendingRequests()
    bool m_finishDeferred = false;
};

// GET /api/admin/snapshot. The body (megabytes for a large cluster) is parsed on a pool
// thread; succeeded() comes back on the GUI thread.
class SnapshotReply : public AdminReply
{
    Q_OBJECT
public:
    using AdminReply::AdminReply;
Q_SIGNALS:
    void succeeded(const rt::api::ClusterSnapshot &snapshot);

protected:
    void interpret(int status, const QByteArray &body) override;
};

// GET /api/cluster/config.
class ConfigListReply : public AdminReply
{
    Q_OBJECT
public:
    using AdminReply::AdminReply;
Q_SIGNALS:
    void succeeded(const rt::dashboard::ConfigListing &listing);

protected:
    void interpret(int status, const QByteArray &body) override;
};

// One key of GET /api/cluster/config (the API lists all keys at once).
class ConfigEntryReply : public AdminReply
{
    Q_OBJECT
public:
    ConfigEntryReply(AdminClient *client, QString key);
Q_SIGNALS:
    // exists == false: no such key (entry holds the key only); listingRevision: the
    // configuration's revision when it was read.
    void succeeded(const rt::api::ConfigValue &entry, bool exists, qint64 listingRevision);

protected:
    void interpret(int status, const QByteArray &body) override;

private:
    QString m_key;
};

// PUT /api/cluster/config/<key> (compare-and-swap, optionally temporary) and DELETE.
class ConfigWriteReply : public AdminReply
{
    Q_OBJECT
public:
    ConfigWriteReply(AdminClient *client, QString key);
    QString key() const { return m_key; }
Q_SIGNALS:
    // The write is in the cluster; `revision` is the key's new mod revision (the expected
    // revision for the next write of it).
    void written(const QString &key, qint64 revision);
    // Nothing was written: the key is not at the expected revision. The conflict carries
    // what is stored now; reapplying means writing again with conflict.current.modRevision.
    void conflicted(const rt::dashboard::ConfigConflict &conflict);

protected:
    void interpret(int status, const QByteArray &body) override;

private:
    QString m_key;
};

// GET /api/tenants.
class TenantListReply : public AdminReply
{
    Q_OBJECT
public:
    using AdminReply::AdminReply;
Q_SIGNALS:
    void succeeded(const QList<rt::api::TenantSummary> &tenants);

protected:
    void interpret(int status, const QByteArray &body) override;
};

// GET, POST, PATCH /api/tenants[/<id>]: the tenant as stored after the call.
class TenantReply : public AdminReply
{
    Q_OBJECT
public:
    using AdminReply::AdminReply;
Q_SIGNALS:
    // The API never shows `suspend`: a caller that changed it knows the new value.
    void succeeded(const rt::api::TenantSummary &tenant);

protected:
    void interpret(int status, const QByteArray &body) override;
};

// Calls answered without a body (DELETE /api/tenants/<id>).
class EmptyReply : public AdminReply
{
    Q_OBJECT
public:
    using AdminReply::AdminReply;
Q_SIGNALS:
    void succeeded();

protected:
    void interpret(int status, const QByteArray &body) override;
};

} // namespace rt::dashboard
