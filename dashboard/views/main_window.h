#pragma once

#include "dashboard/api/failover_allowlist.h"

#include <QDialog>
#include <QMainWindow>

class QLabel;
class QLineEdit;
class QProgressBar;
class QTabWidget;

namespace rt::dashboard {

class ConfigPage;
class FlowPage;
class NodesPage;
class PlacementPage;
class SnapshotModels;
class TenantsPage;

// Asks for the node to connect to, the operator token (a JWT signed with API_JWT_SECRET) and
// what to trust: the CA file of https nodes and the hosts the dashboard may fail over to.
class ConnectDialog : public QDialog
{
    Q_OBJECT
public:
    ConnectDialog(const QString &url, const QByteArray &token, const NodeTrust &trust = {},
                  QWidget *parent = nullptr);
    QString url() const;
    QByteArray token() const;
    NodeTrust trust() const;
    QLineEdit *urlEdit() const { return m_url; }
    QLineEdit *tokenEdit() const { return m_token; }
    QLineEdit *caFileEdit() const { return m_caFile; }
    QLineEdit *failoverHostsEdit() const { return m_failoverHosts; }

private:
    void chooseCaFile();

    QLineEdit *m_url; // child
    QLineEdit *m_token; // child
    QLineEdit *m_caFile; // child
    QLineEdit *m_failoverHosts; // child
};

// The dashboard's main window: one tab per view (Nodes, Placement, Message flow,
// Configuration, Tenants) over the models of SnapshotModels, and a status bar that always
// shows where the connection stands, how old the picture is and whether calls are in flight.
// It only states intents (connectRequested, languageRequested, ...); DashboardApplication acts
// on them. `models` null: the window shows the connection state only (no views). Lives on the
// GUI thread.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(SnapshotModels *models = nullptr, QWidget *parent = nullptr);

    QString connectionStateText() const;
    QTabWidget *tabs() const { return m_tabs; }
    NodesPage *nodesPage() const { return m_nodesPage; }
    PlacementPage *placementPage() const { return m_placementPage; }
    FlowPage *flowPage() const { return m_flowPage; }
    ConfigPage *configPage() const { return m_configPage; }
    TenantsPage *tenantsPage() const { return m_tenantsPage; }
    // The language menu's choices: locale names, "" for the system's.
    QStringList languageChoices() const;

    // Opens the connect dialog (non-blocking); connectRequested() follows its acceptance.
    ConnectDialog *openConnectDialog(const QString &url, const QByteArray &token,
                                     const NodeTrust &trust = {});

    // `healthy`: connected (false: connecting, reconnecting, failed or disconnected).
    void setConnectionState(const QString &text, bool healthy);
    void setPendingRequests(int pending);
    void setSnapshotTime(qint64 takenAtMs, const QString &answeredBy);
    // A problem the operator must see (a failed call, a snapshot that could not be read).
    void showProblem(const QString &text);
    void setCurrentLanguage(const QString &language);

Q_SIGNALS:
    void connectRequested(const QString &url, const QByteArray &token,
                          const rt::dashboard::NodeTrust &trust);
    void disconnectRequested();
    // A locale name, "" for the system's; applies at the next start.
    void languageRequested(const QString &language);

private:
    void showAbout();

    QTabWidget *m_tabs = nullptr; // child (central widget)
    NodesPage *m_nodesPage = nullptr; // owned by m_tabs
    PlacementPage *m_placementPage = nullptr; // owned by m_tabs
    FlowPage *m_flowPage = nullptr; // owned by m_tabs
    ConfigPage *m_configPage = nullptr; // owned by m_tabs
    TenantsPage *m_tenantsPage = nullptr; // owned by m_tabs
    QLabel *m_connectionState = nullptr; // child
    QLabel *m_snapshotTime = nullptr; // child
    QProgressBar *m_busy = nullptr; // child
    QMenu *m_languageMenu = nullptr; // child
    QString m_lastUrl;
    QByteArray m_lastToken;
    NodeTrust m_lastTrust;
};

} // namespace rt::dashboard
