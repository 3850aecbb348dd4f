#pragma once

#include <QObject>
#include <QString>

#include <functional>

namespace rt::api {
struct ClusterSnapshot;
}

namespace rt::dashboard {

class ConnectionManager;
class DashboardSettings;
class MainWindow;
class SnapshotModels;
struct ConfigEdit;
struct ConnectionState;
struct NodeTrust;
struct TenantChanges;

// The dashboard's wiring: the connection (ConnectionManager and its AdminClient) feeds the
// models (SnapshotModels), the window shows them, and the window's intents (connect, edit the
// configuration, manage tenants, choose a language) become API calls whose outcomes go back to
// the pages in words. Also the unattended report mode (--screenshot). Lives on the GUI thread.
class DashboardApplication : public QObject
{
    Q_OBJECT
public:
    explicit DashboardApplication(DashboardSettings &settings, QObject *parent = nullptr);
    ~DashboardApplication() override;

    MainWindow *window() const { return m_window; }
    SnapshotModels *models() const { return m_models; }
    ConnectionManager *connection() const { return m_connection; }

    // Connects to `url` with `token` and `trust`, remembering all three (and trying the
    // remembered endpoints of the cluster too, as far as `trust` admits them, when that node
    // does not answer).
    void connectTo(const QString &url, const QByteArray &token, const NodeTrust &trust);

    // Report mode: once the first snapshot and `liveUpdates` live pushes arrived (and the tenant
    // list), writes one PNG per view into `directory`, and what the models show as JSON
    // (summaryName(), see modelSummary()), and calls `done(0)`; `done(non-zero)`
    // with the reason printed when the connection fails or nothing arrives within `timeoutMs`.
    void takeScreenshots(const QString &directory, int liveUpdates, int timeoutMs,
                         std::function<void(int exitCode)> done);
    // The files takeScreenshots() writes, in tab order.
    static QStringList screenshotNames();
    // The JSON file takeScreenshots() writes with them.
    static QString summaryName();

private:
    void onStateChanged(const ConnectionState &state);
    void onSnapshot(const api::ClusterSnapshot &snapshot);
    void onSnapshotApplied();
    void refreshTenants();
    void writeConfig(const ConfigEdit &edit);
    void deleteConfig(const QString &key, qint64 expectedRevision);
    void createTenant(const TenantChanges &tenant);
    void updateTenant(const QString &externalId, const TenantChanges &changes);
    void suspendTenant(const QString &externalId, bool suspended);
    void checkScreenshotsReady();
    void finishScreenshots(int exitCode, const QString &problem);

    DashboardSettings &m_settings;
    SnapshotModels *m_models; // child
    ConnectionManager *m_connection; // child
    MainWindow *m_window; // owned here (a top-level widget has no QObject parent)
    QString m_connectedNode; // the node of the last Connected state (tenants are re-read on change)
    int m_snapshotsApplied = 0; // by the models, all steps done
    bool m_tenantsLoaded = false;

    struct ScreenshotJob
    {
        QString directory;
        int snapshotsNeeded = 0;
        std::function<void(int)> done;
    };
    std::unique_ptr<ScreenshotJob> m_screenshots;
};

} // namespace rt::dashboard
