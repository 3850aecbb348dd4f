#include "server/cdc/tenant_database.h"

#include "server/cdc/change_pipeline.h"
#include "server/cdc/logging.h"
#include "server/cdc/subscription_store.h"
#include "server/cdc/transaction_assembler.h"
#include "server/pgoutput/decoder.h"
#include "server/pgoutput/types.h"
#include "server/postgres/connection.h"
#include "server/postgres/migrations.h"
#include "server/postgres/pool.h"
#include "server/postgres/sql_text.h"
#include "server/pubsub/pubsub.h"
#include "server/replication/replication_stream.h"
#include "server/subscriptions/params.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QTimer>

#include <algorithm>
#include <utility>

namespace rt::cdc {

namespace {

const QByteArray MessagesPublication = QByteArrayLiteral("supabase_realtime_messages_publication");
const QString UnableToConnect = QStringLiteral(
        "UnableToConnectToProject: Realtime was unable to connect to the project database");
const QString LackOfConnections = QStringLiteral(
        "DatabaseLackOfConnections: Database can't accept more connections, Realtime won't "
        "connect");
// Without subscribers, the change stream starts this long after connecting (database broadcasts
// need it; postgres_changes subscribers start it at once).
constexpr int StreamGraceMs = 5000;

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

// The stream's deliveries, reported to its ledger (flow control).
pubsub::DeliveryCounting regulated(pubsub::DeliveryCounting counting, FlowLedgerPtr ledger)
{
    counting.ledger = std::move(ledger);
    return counting;
}

} // namespace

TenantDatabase::TenantDatabase(TenantDatabaseOptions options, const pubsub::PubSub &pubsub,
                               pubsub::DeliveryCounting counting, QObject *parent)
    : QObject(parent),
      m_options(std::move(options)),
      m_assembler([this](const QByteArray &schema, const QByteArray &table) {
          return m_registry.snapshot()->bindingsOn(schema, table) != nullptr;
      }),
      m_store(new SubscriptionStore(
              m_options.publication, [this] { return m_pool; }, this)),
      m_pipeline(new ChangePipeline(
              ChangePipeline::Parts{ m_options.tenantId, m_options.rlsStrategy, m_registry,
                                     m_assembler, pubsub, regulated(std::move(counting), m_ledger),
                                     [this] { return m_pool; }, [this] { return fanOutReady(); } },
              this))
{
    constexpr int RegulateIntervalMs = 10;
    m_regulateTimer.setInterval(RegulateIntervalMs);
    QObject::connect(&m_regulateTimer, &QTimer::timeout, this, &TenantDatabase::regulateStream);
    constexpr int ConfirmRetryMs = 5;
    m_confirmTimer.setSingleShot(true);
    m_confirmTimer.setInterval(ConfirmRetryMs);
    QObject::connect(&m_confirmTimer, &QTimer::timeout, this, &TenantDatabase::confirmHandedOver);
    QObject::connect(m_pipeline, &ChangePipeline::published, this, [this](quint64 endLsn) {
        m_publishedLsn = std::max(m_publishedLsn, endLsn);
        confirmHandedOver();
    });
    QObject::connect(m_pipeline, &ChangePipeline::progressed, this,
                     &TenantDatabase::regulateStream);
}

void TenantDatabase::regulateStream()
{
    if (m_stream == nullptr) {
        m_regulateTimer.stop();
        return;
    }
    const qint64 inflight = m_pipeline->queuedBytes() + m_ledger->outstandingBytes();
    if (!m_stream->isPaused() && inflight > m_options.maxInflightBytes) {
        qCDebug(lcCdc) << "tenant" << m_options.tenantId << "change stream waits:" << inflight
                       << "bytes in flight," << m_ledger->slowSockets() << "slow sockets";
        m_stream->pause();
        m_regulateTimer.start();
    } else if (m_stream->isPaused() && inflight <= m_options.maxInflightBytes / 2) {
        m_stream->resume();
        m_regulateTimer.stop();
    }
}

void TenantDatabase::confirmHandedOver()
{
    if (m_publishedLsn == 0 || m_stream == nullptr) {
        return;
    }
    if (m_ledger->undeliveredBytes() > 0) {
        // Published messages still wait in the workers' mailboxes: confirm once they are all
        // in their recipients' sockets (the ledger says so), not before.
        if (!m_confirmTimer.isActive()) {
            m_confirmTimer.start();
        }
        return;
    }
    // Everything up to m_publishedLsn is in the sockets now: PostgreSQL may forget it.
    m_stream->confirm(std::exchange(m_publishedLsn, 0));
}

bool TenantDatabase::fanOutReady() const
{
    return m_ledger->slowSockets() == 0
            && m_ledger->undeliveredBytes() <= m_options.maxInflightBytes / 16
            && m_ledger->socketBytes() <= m_options.maxInflightBytes;
}

TenantDatabase::~TenantDatabase()
{
    // Children (pool, stream) close their connections; the persistent slot stays, so a later
    // start resumes where this one confirmed. Joins still waiting get their answer.
    finishConnect(UnableToConnect);
}

void TenantDatabase::connect(std::function<void(ConnectOutcome)> done)
{
    switch (m_state) {
    case State::Ready:
        done(std::nullopt);
        return;
    case State::Connecting:
    case State::Migrating:
        m_connectWaiters.push_back(std::move(done));
        return;
    case State::Failed:
        if (nowMs() - m_failedAtMs < m_options.connectRetryMs) {
            done(m_failure);
            return;
        }
        break;
    case State::Idle:
        break;
    }
    m_connectWaiters.push_back(std::move(done));
    m_state = State::Connecting;
    qCInfo(lcCdc) << "connecting to the database of tenant" << m_options.tenantId << "at"
                  << m_options.settings.describe();
    openMigrationConnection();
}

void TenantDatabase::openMigrationConnection()
{
    // Migrations first, on a connection of their own, then the pool.
    auto *migrationConnection = new postgres::Connection(this);
    QObject::connect(migrationConnection, &postgres::Connection::failed, this,
                     [this, migrationConnection](const postgres::PgError &error) {
                         migrationConnection->deleteLater();
                         fail(error.text(), error.sqlState);
                     });
    QObject::connect(migrationConnection, &postgres::Connection::ready, this,
                     [this, migrationConnection] { runMigrations(migrationConnection); });
    migrationConnection->open(m_options.settings);
}

void TenantDatabase::runMigrations(postgres::Connection *migrationConnection)
{
    m_state = State::Migrating;
    auto *runner = new postgres::MigrationRunner(this);
    QObject::connect(runner, &postgres::MigrationRunner::done, this,
                     [this, runner, migrationConnection](int applied) {
                         runner->deleteLater();
                         migrationConnection->deleteLater();
                         qCInfo(lcCdc) << "tenant" << m_options.tenantId
                                       << "migrations applied:" << applied;
                         openPool();
                     });
    QObject::connect(runner, &postgres::MigrationRunner::failed, this,
                     [this, runner, migrationConnection](const postgres::PgError &error) {
                         runner->deleteLater();
                         migrationConnection->deleteLater();
                         qCWarning(lcCdc) << "tenant" << m_options.tenantId
                                          << "migrations failed:" << error.text();
                         fail(error.text(), error.sqlState);
                     });
    runner->start(migrationConnection, postgres::tenantMigrations());
}

void TenantDatabase::openPool()
{
    m_pool = new postgres::Pool(this);
    QObject::connect(m_pool, &postgres::Pool::ready, this, [this] { onPoolReady(); });
    QObject::connect(m_pool, &postgres::Pool::failed, this, [this](const postgres::PgError &error) {
        fail(error.text(), error.sqlState);
    });
    m_pool->open(m_options.settings, m_options.poolSize);
}

void TenantDatabase::onPoolReady()
{
    if (m_state != State::Migrating) {
        return;
    }
    m_state = State::Ready;
    m_reconnectDelayMs = 0;
    Q_EMIT connectionReady();
    maintainPartitions();
    finishConnect(std::nullopt);
    // The stream waits for its first subscriber (or a short grace period): changes a restart
    // left in the slot are then matched, not confirmed unseen.
    if (!m_registry.isEmpty()) {
        ensureStream();
    } else {
        QTimer::singleShot(StreamGraceMs, this, [this] { ensureStream(); });
    }
}

void TenantDatabase::maintainPartitions()
{
    // realtime.messages has one partition per UTC day: keep yesterday .. today + 3 and drop
    // those older than 72 hours (spec §7.5), at connect and every few hours after.
    if (!m_partitionTimer.isActive()) {
        m_partitionTimer.setInterval(6 * 3600 * 1000);
        QObject::connect(&m_partitionTimer, &QTimer::timeout, this,
                         &TenantDatabase::maintainPartitions);
        m_partitionTimer.start();
    }
    if (m_pool == nullptr) {
        return;
    }
    postgres::Statement create;
    create.sql = QByteArrayLiteral(
            "SELECT realtime.create_messages_partitions((now() AT TIME ZONE 'utc')::date - 1, "
            "(now() AT TIME ZONE 'utc')::date + 3)");
    postgres::Statement drop;
    drop.sql = QByteArrayLiteral("SELECT realtime.drop_messages_partitions('72 hours')");
    for (const postgres::Statement &statement : { create, drop }) {
        m_pool->run(statement,
                    [tenant = m_options.tenantId](
                            const rt::Result<postgres::QueryResult, postgres::PgError> &result) {
                        if (!result) {
                            qCWarning(lcCdc) << "tenant" << tenant
                                             << "realtime.messages partition upkeep failed:"
                                             << result.error().text();
                        }
                    });
    }
}

void TenantDatabase::fail(const QString &reason, const QByteArray &sqlState)
{
    if (m_state == State::Failed) {
        return;
    }
    qCWarning(lcCdc) << "database of tenant" << m_options.tenantId << "unavailable:" << reason;
    m_state = State::Failed;
    m_failedAtMs = nowMs();
    // 53300 too_many_connections
    m_failure = sqlState == "53300" ? LackOfConnections : UnableToConnect;
    if (m_stream != nullptr) {
        m_stream->stop();
        m_stream->deleteLater();
        m_stream = nullptr;
    }
    if (m_pool != nullptr) {
        m_pool->close();
        m_pool->deleteLater();
        m_pool = nullptr;
    }
    m_streaming = false;
    finishConnect(m_failure);
    Q_EMIT connectionLost(reason);
    if (!m_registry.isEmpty()) {
        // Subscribers are waiting for changes (the database restarted, the network dropped):
        // reconnect by ourselves, with a growing pause. The persistent slot re-sends everything
        // after the last confirmed position, so nothing committed meanwhile is lost.
        m_reconnectDelayMs = qBound(m_options.connectRetryMs, m_reconnectDelayMs * 2, 30'000);
        qCInfo(lcCdc) << "reconnecting to the database of tenant" << m_options.tenantId << "in"
                      << m_reconnectDelayMs << "ms";
        QTimer::singleShot(m_reconnectDelayMs, this, [this] {
            if (m_state == State::Failed && !m_registry.isEmpty()) {
                m_failedAtMs = 0; // retry now, whatever connectRetryMs says
                connect([](const ConnectOutcome &) {});
            }
        });
    }
}

void TenantDatabase::finishConnect(const ConnectOutcome &outcome)
{
    auto waiters = std::move(m_connectWaiters);
    m_connectWaiters.clear();
    for (auto &waiter : waiters) {
        waiter(outcome);
    }
}

void TenantDatabase::startStream()
{
    replication::StreamOptions options;
    options.settings = m_options.settings;
    options.settings.replication = true;
    options.slotName = m_options.slotName;
    options.publications = { m_options.publication, MessagesPublication };
    options.takeOverActiveSlot = m_streamClaimed;
    m_stream = new replication::ReplicationStream(this);
    QObject::connect(m_stream, &replication::ReplicationStream::streaming, this, [this] {
        qCInfo(lcCdc) << "tenant" << m_options.tenantId << "change stream running";
        m_streaming = true;
        auto waiters = std::move(m_streamWaiters);
        m_streamWaiters.clear();
        for (auto &waiter : waiters) {
            waiter();
        }
    });
    QObject::connect(m_stream, &replication::ReplicationStream::messages, this,
                     &TenantDatabase::onWalMessages);
    QObject::connect(m_stream, &replication::ReplicationStream::failed, this,
                     [this](const QString &reason, bool willRetry) {
                         qCWarning(lcCdc) << "tenant" << m_options.tenantId
                                          << "change stream failed:" << reason
                                          << (willRetry ? "(retrying)" : "");
                         m_streaming = false;
                         // A half-read transaction is sent again from the confirmed position.
                         m_assembler.abandonOpenTransaction();
                         if (!willRetry) {
                             fail(reason, QByteArray());
                         }
                     });
    m_stream->start(options);
}

void TenantDatabase::ensureStream()
{
    if (m_stream != nullptr || m_state != State::Ready || !m_streamAllowed) {
        return;
    }
    const qint64 waitMs = m_streamAllowedAtMs - nowMs();
    if (waitMs > 0) {
        QTimer::singleShot(waitMs, this, [this] { ensureStream(); });
        return;
    }
    startStream();
}

void TenantDatabase::setStreamAllowed(bool allowed, int graceMs)
{
    if (allowed == m_streamAllowed) {
        return;
    }
    m_streamAllowed = allowed;
    m_streamClaimed = allowed;
    if (allowed) {
        m_streamAllowedAtMs = nowMs() + qMax(0, graceMs);
        if (!m_streamWaiters.empty() || !m_registry.isEmpty()) {
            ensureStream();
        } else {
            // As after a connect: the stream also carries database broadcasts.
            QTimer::singleShot(qMax(0, graceMs), this, [this] { ensureStream(); });
        }
        return;
    }
    if (m_stream != nullptr) {
        qCInfo(lcCdc) << "tenant" << m_options.tenantId << "change stream stopped here";
        m_stream->stop();
        m_stream->deleteLater();
        m_stream = nullptr;
    }
    m_streaming = false;
    m_assembler.abandonOpenTransaction();
    // Decoded but unpublished: never confirmed, so the next reader of the slot gets them.
    m_pipeline->clear();
}

void TenantDatabase::whenStreaming(std::function<void()> done)
{
    if (m_streaming) {
        done();
        return;
    }
    m_streamWaiters.push_back(std::move(done));
    ensureStream();
}

void TenantDatabase::onWalMessages(const QList<replication::WalMessage> &batch)
{
    for (const replication::WalMessage &wal : batch) {
        rt::Result<pgoutput::Message, pgoutput::DecodeError> decoded =
                pgoutput::decode(wal.payload);
        if (!decoded) {
            // Never silently: the message is logged with its position. It cannot be decoded
            // again either, so skipping is the only way forward.
            qCCritical(lcCdc) << "tenant" << m_options.tenantId << "undecodable WAL message at"
                              << pgoutput::formatLsn(wal.walStart) << ":"
                              << decoded.error().message;
            continue;
        }
        m_assembler.add(decoded.value());
    }
    if (m_assembler.takeRelationsDescribed()) {
        m_pipeline->invalidatePrivileges(); // a new description may come with new grants
    }
    if (std::optional<ChangeBatch> committed = m_assembler.takeCommitted()) {
        m_pipeline->push(std::move(*committed));
    }
    regulateStream();
}

void TenantDatabase::subscribe(SubscribeRequest request, std::function<void(SubscribeOutcome)> done)
{
    connect([this, guard = QPointer<TenantDatabase>(this), request = std::move(request),
             done = std::move(done)](const ConnectOutcome &outcome) mutable {
        if (!guard) {
            return;
        }
        if (outcome) {
            done(SubscribeOutcome{ false, *outcome });
            return;
        }
        subscribeNow(std::move(request), std::move(done));
    });
}

void TenantDatabase::subscribeNow(SubscribeRequest request,
                                  std::function<void(SubscribeOutcome)> done)
{
    const Subscriber *replaced = m_registry.find(request.memberId);
    m_store->store(
            std::move(request), replaced,
            [this, guard = QPointer<TenantDatabase>(this),
             done = std::move(done)](Result<Subscriber, QString> stored) mutable {
                if (!guard) {
                    return;
                }
                if (!stored) {
                    done(SubscribeOutcome{ false, stored.error() });
                    return;
                }
                // Registered now, answered once the stream runs: every change decoded
                // after the client reads "Subscribed to PostgreSQL" is matched (and after
                // a restart, those still in the slot too).
                m_registry.add(std::move(stored).value());
                whenStreaming([guard, done = std::move(done)]() mutable {
                    if (guard) {
                        done(SubscribeOutcome{ true, QStringLiteral("Subscribed to PostgreSQL") });
                    }
                });
            });
}

void TenantDatabase::unsubscribe(quint64 memberId)
{
    m_store->remove(m_registry.remove(memberId));
}

} // namespace rt::cdc
