// The whole dashboard at the scale the issue asks for (100 nodes, 10,000 tenants, ~20,000 tenant
// flows): DashboardApplication with its window shown connects to a synthetic node over real
// HTTP and a real WebSocket, reads its 3.7 MB snapshot and then follows its live feed while the
// operator switches between the pages. The GUI thread must never be busy for 50 ms or more in
// one stretch, neither while connecting and taking the first snapshot nor live.
//
// The stretch is measured between the ticks of a 2 ms timer on the GUI thread, in the thread's
// own CPU time: everything the event loop ran between two ticks (network reads, model updates,
// proxies, painting) counts, and time the machine gave to other processes does not (CI runs this
// beside parallel builds on two cores). Interference can only add CPU time (shared caches), so
// the scenario runs up to three times and the best attempt counts: a stall the dashboard causes
// shows in every attempt. CTest runs this test alone (RUN_SERIAL).
//
// The synthetic node runs on its own thread, so producing and sending its snapshots costs the
// dashboard's thread nothing; it answers GET /api/admin/snapshot and GET /api/tenants over HTTP
// and speaks the live feed's Phoenix V1 on /api/admin/live/websocket (docs/admin-api.md).
#include "budget.h"
#include "dashboard/api/connection_manager.h"
#include "dashboard/app/dashboard_application.h"
#include "dashboard/app/dashboard_settings.h"
#include "dashboard/models/placement_model.h"
#include "dashboard/models/snapshot_models.h"
#include "dashboard/models/tenant_flow_model.h"
#include "dashboard/views/main_window.h"
#include "shared/protocol/phoenix_codec.h"
#include "synthetic_cluster.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QScopeGuard>
#include <QTabWidget>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <QWebSocket>
#include <QWebSocketServer>

#include <algorithm>
#include <atomic>
#include <optional>

using namespace rt::dashboard;
using namespace rt::dashboard::testing;
using namespace std::chrono_literals;

namespace {

constexpr double BudgetMs = 50; // the "no GUI stall over 50 ms"
constexpr int MaxAttempts = 3;
constexpr int LivePushes = 12;

// The longest GUI stretches of one attempt, in ms.
struct Stalls
{
    double firstCpu = 0; // connecting and the first snapshot
    double firstWall = 0;
    double liveCpu = 0; // the live feed while switching pages
    double liveWall = 0;

    double worstCpu() const { return std::max(firstCpu, liveCpu); }
};

// The synthetic node. Lives on its own thread (created there by start()).
class SyntheticNode : public QObject
{
    Q_OBJECT
public:
    // Listens on a free loopback port; returns it (blocking the caller until the node is ready).
    void start()
    {
        m_tcp = new QTcpServer(this);
        m_webSockets = new QWebSocketServer(QStringLiteral("synthetic"),
                                            QWebSocketServer::NonSecureMode, this);
        connect(m_tcp, &QTcpServer::newConnection, this, &SyntheticNode::onNewConnection);
        connect(m_webSockets, &QWebSocketServer::newConnection, this,
                &SyntheticNode::onNewWebSocket);
        m_tcp->listen(QHostAddress::LocalHost, 0);
        m_snapshotJson = snapshotJson();
        m_pushTimer = new QTimer(this);
        connect(m_pushTimer, &QTimer::timeout, this, &SyntheticNode::push);
        m_port = m_tcp->serverPort();
    }
    void stopPushing() { m_pushTimer->stop(); }
    quint16 port() const { return m_port; }
    int pushesSent() const { return m_pushes.load(); }
    // The tenant count of the last snapshot sent.
    int lastTenantCount() const { return m_lastTenants.load(); }

private:
    QByteArray snapshotJson() const
    {
        return QJsonDocument(m_cluster.snapshot().toJson()).toJson(QJsonDocument::Compact);
    }

    void onNewConnection()
    {
        while (QTcpSocket *socket = m_tcp->nextPendingConnection()) {
            connect(socket, &QTcpSocket::readyRead, this, [this, socket] { onRequest(socket); });
            connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        }
    }

    void onRequest(QTcpSocket *socket)
    {
        // Peek, so that a WebSocket upgrade can be handed over with its handshake unread.
        const QByteArray head = socket->peek(socket->bytesAvailable());
        if (!head.contains("\r\n\r\n")) {
            return;
        }
        if (head.toLower().contains("upgrade: websocket")) {
            socket->disconnect(this);
            m_webSockets->handleConnection(socket);
            return;
        }
        socket->readAll();
        const QByteArray requestLine = head.left(head.indexOf("\r\n"));
        QByteArray body;
        if (requestLine.startsWith("GET /api/admin/snapshot")) {
            body = m_snapshotJson;
        } else if (requestLine.startsWith("GET /api/tenants")) {
            body = QByteArrayLiteral("{\"data\":[]}");
        } else {
            socket->write(
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            socket->disconnectFromHost();
            return;
        }
        socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                      + QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n");
        socket->write(body);
        socket->disconnectFromHost();
    }

    void onNewWebSocket()
    {
        while (QWebSocket *socket = m_webSockets->nextPendingConnection()) {
            socket->setParent(this);
            connect(socket, &QWebSocket::textMessageReceived, this,
                    [this, socket](const QString &text) { onFrame(socket, text); });
            connect(socket, &QWebSocket::disconnected, socket, &QObject::deleteLater);
        }
    }

    void onFrame(QWebSocket *socket, const QString &text)
    {
        const QJsonObject frame = QJsonDocument::fromJson(text.toUtf8()).object();
        const QByteArray topic = frame.value(u"topic").toString().toUtf8();
        const QByteArray ref = rt::protocol::jsonString(frame.value(u"ref").toString().toUtf8());
        socket->sendTextMessage(QString::fromUtf8(
                rt::protocol::encodeReply(rt::protocol::Vsn::V1, ref, ref, topic, "ok", "{}")));
        if (frame.value(u"event").toString() == u"phx_join") {
            m_feed = socket;
            m_pushTimer->start(400ms);
        }
    }

    void push()
    {
        if (!m_feed) {
            return;
        }
        m_cluster.advance(++m_step, 6);
        m_snapshotJson = snapshotJson();
        m_feed->sendTextMessage(QString::fromUtf8(
                rt::protocol::encodePush(rt::protocol::Vsn::V1, "null", "null", "admin:cluster",
                                         "snapshot", m_snapshotJson)));
        m_lastTenants = int(m_cluster.snapshot().tenants.size());
        ++m_pushes;
    }

    SyntheticCluster m_cluster;
    QByteArray m_snapshotJson;
    QTcpServer *m_tcp = nullptr;
    QWebSocketServer *m_webSockets = nullptr;
    QTimer *m_pushTimer = nullptr;
    QPointer<QWebSocket> m_feed;
    int m_step = 0;
    quint16 m_port = 0;
    std::atomic<int> m_pushes{ 0 };
    std::atomic<int> m_lastTenants{ 0 };
};

// The GUI thread's longest stretches of work, from a fast timer's ticks.
class StallMonitor : public QObject
{
public:
    StallMonitor()
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        connect(&m_timer, &QTimer::timeout, this, &StallMonitor::tick);
    }
    void start()
    {
        m_maxCpuMs = 0;
        m_maxWallMs = 0;
        m_lastCpuMs = threadCpuMs();
        m_wall.start();
        m_timer.start(2ms);
    }
    void stop() { m_timer.stop(); }
    double maxCpuMs() const { return m_maxCpuMs; }
    double maxWallMs() const { return m_maxWallMs; }

private:
    void tick()
    {
        const double cpu = threadCpuMs();
        m_maxCpuMs = std::max(m_maxCpuMs, cpu - m_lastCpuMs);
        m_maxWallMs = std::max(m_maxWallMs, double(m_wall.nsecsElapsed()) / 1e6);
        m_lastCpuMs = cpu;
        m_wall.restart();
    }

    QTimer m_timer;
    QElapsedTimer m_wall;
    double m_lastCpuMs = 0;
    double m_maxCpuMs = 0;
    double m_maxWallMs = 0;
};

} // namespace

class DashboardStallTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void followsALargeClusterWithoutStallingTheWindow()
    {
        std::optional<Stalls> best;
        const int attempts = budgetsAsserted() ? MaxAttempts : 1;
        for (int attempt = 1; attempt <= attempts; ++attempt) {
            Stalls stalls;
            runOnce(stalls);
            if (QTest::currentTestFailed()) {
                return;
            }
            qInfo("attempt %d: longest GUI stretch connecting and taking the first snapshot "
                  "%.1f ms of CPU (%.1f ms by the wall clock), live %.1f ms of CPU (%.1f ms)",
                  attempt, stalls.firstCpu, stalls.firstWall, stalls.liveCpu, stalls.liveWall);
            if (!best || stalls.worstCpu() < best->worstCpu()) {
                best = stalls;
            }
            if (best->worstCpu() < BudgetMs) {
                break;
            }
        }
        if (!budgetsAsserted()) {
            return; // the figures are reported above; ctest -L benchmark asserts them
        }
        QVERIFY2(best->firstCpu < BudgetMs,
                 qPrintable(QStringLiteral("connecting and the first snapshot held the GUI "
                                           "thread for %1 ms of CPU in one stretch")
                                    .arg(best->firstCpu)));
        QVERIFY2(best->liveCpu < BudgetMs,
                 qPrintable(QStringLiteral("a live snapshot held the GUI thread for %1 ms of CPU "
                                           "in one stretch")
                                    .arg(best->liveCpu)));
    }

private:
    // One attempt: a fresh window and node; fills `stalls`, fails the test on wrong contents.
    void runOnce(Stalls &stalls)
    {
        QThread nodeThread;
        nodeThread.setObjectName(QStringLiteral("synthetic-node"));
        auto *node = new SyntheticNode;
        node->moveToThread(&nodeThread);
        connect(&nodeThread, &QThread::finished, node, &QObject::deleteLater);
        nodeThread.start();
        const auto stopNode = qScopeGuard([&nodeThread] {
            nodeThread.quit();
            nodeThread.wait();
        });
        QMetaObject::invokeMethod(node, &SyntheticNode::start, Qt::BlockingQueuedConnection);
        QVERIFY(node->port() != 0);

        QTemporaryDir dir;
        DashboardSettings settings(dir.filePath(QStringLiteral("dashboard.ini")));
        DashboardApplication app(settings);
        app.window()->resize(1200, 800);
        app.window()->show();
        QVERIFY(QTest::qWaitForWindowExposed(app.window()));

        int snapshots = 0;
        connect(app.models(), &SnapshotModels::snapshotApplied, this,
                [&snapshots] { ++snapshots; });

        StallMonitor monitor;
        monitor.start();
        app.connectTo(QStringLiteral("http://127.0.0.1:%1").arg(node->port()), "token", {});
        // The first snapshot: 10,000 tenants arrive in the models at once.
        QTRY_VERIFY_WITH_TIMEOUT(snapshots >= 1, 60000);
        QCOMPARE(app.models()->placement()->rowCount(), TenantCount);
        stalls.firstCpu = monitor.maxCpuMs();
        stalls.firstWall = monitor.maxWallMs();

        // The live feed, with the operator looking at each page in turn.
        monitor.start();
        QTabWidget *tabs = app.window()->tabs();
        int lastSeen = snapshots;
        QElapsedTimer elapsed;
        elapsed.start();
        while (snapshots < 1 + LivePushes && elapsed.elapsed() < 120000) {
            QTest::qWait(20);
            if (snapshots != lastSeen) {
                lastSeen = snapshots;
                tabs->setCurrentIndex((tabs->currentIndex() + 1) % tabs->count());
            }
        }
        monitor.stop();
        QVERIFY(snapshots >= 1 + LivePushes);
        stalls.liveCpu = monitor.maxCpuMs();
        stalls.liveWall = monitor.maxWallMs();

        // The window shows the last snapshot the node sent (the feed is not behind).
        QMetaObject::invokeMethod(node, &SyntheticNode::stopPushing, Qt::BlockingQueuedConnection);
        QTRY_COMPARE(app.models()->placement()->rowCount(), node->lastTenantCount());
        QVERIFY(app.models()->tenantFlows()->rowCount() > 15000);

        app.connection()->disconnectFromCluster();
    }
};

QTEST_MAIN(DashboardStallTest)
#include "tst_dashboard_stall.moc"
