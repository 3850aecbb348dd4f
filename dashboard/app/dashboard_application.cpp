#include "dashboard/app/dashboard_application.h"

#include "dashboard/api/admin_client.h"
#include "dashboard/api/admin_reply.h"
#include "dashboard/api/admin_responses.h"
#include "dashboard/api/connection_manager.h"
#include "dashboard/api/connection_state.h"
#include "dashboard/api/tenant_changes.h"
#include "dashboard/app/dashboard_settings.h"
#include "dashboard/app/model_summary.h"
#include "dashboard/models/snapshot_models.h"
#include "dashboard/models/tenants_model.h"
#include "dashboard/views/config_page.h"
#include "dashboard/views/main_window.h"
#include "dashboard/views/tenants_page.h"
#include "shared/api/cluster_snapshot.h"
#include "shared/api/tenant_summary.h"

#include <QDir>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QPixmap>
#include <QSaveFile>
#include <QTabWidget>
#include <QTimer>

#include <chrono>

Q_LOGGING_CATEGORY(lcDashboard, "rt.dashboard")

namespace rt::dashboard {

DashboardApplication::DashboardApplication(DashboardSettings &settings, QObject *parent)
    : QObject(parent),
      m_settings(settings),
      m_models(new SnapshotModels(this)),
      m_connection(new ConnectionManager(this)),
      m_window(new MainWindow(m_models))
{
    m_window->setCurrentLanguage(m_settings.language());
    AdminClient *client = m_connection->adminClient();

    connect(m_connection, &ConnectionManager::stateChanged, this,
            &DashboardApplication::onStateChanged);
    connect(m_connection, &ConnectionManager::snapshotReceived, this,
            &DashboardApplication::onSnapshot);
    connect(m_models, &SnapshotModels::snapshotApplied, this,
            &DashboardApplication::onSnapshotApplied);
    connect(m_connection, &ConnectionManager::knownEndpointsChanged, this,
            [this](const QList<QUrl> &endpoints) { m_settings.setKnownEndpoints(endpoints); });
    connect(m_connection, &ConnectionManager::problemOccurred, m_window, &MainWindow::showProblem);
    connect(client, &AdminClient::pendingRequestsChanged, m_window,
            &MainWindow::setPendingRequests);
    connect(client, &AdminClient::requestFailed, this, [this](const ApiError &error) {
        if (error.kind != ApiError::Kind::Canceled) {
            qCWarning(lcDashboard) << "admin API call failed:" << error.text;
            m_window->showProblem(error.text);
        }
    });

    connect(m_window, &MainWindow::connectRequested, this, &DashboardApplication::connectTo);
    connect(m_window, &MainWindow::disconnectRequested, m_connection,
            &ConnectionManager::disconnectFromCluster);
    connect(m_window, &MainWindow::languageRequested, this, [this](const QString &language) {
        m_settings.setLanguage(language);
        m_window->setCurrentLanguage(language);
    });
    connect(m_window->configPage(), &ConfigPage::writeRequested, this,
            &DashboardApplication::writeConfig);
    connect(m_window->configPage(), &ConfigPage::deleteRequested, this,
            &DashboardApplication::deleteConfig);
    connect(m_window->tenantsPage(), &TenantsPage::refreshRequested, this,
            &DashboardApplication::refreshTenants);
    connect(m_window->tenantsPage(), &TenantsPage::createRequested, this,
            &DashboardApplication::createTenant);
    connect(m_window->tenantsPage(), &TenantsPage::updateRequested, this,
            &DashboardApplication::updateTenant);
    connect(m_window->tenantsPage(), &TenantsPage::suspendRequested, this,
            &DashboardApplication::suspendTenant);
}

DashboardApplication::~DashboardApplication()
{
    delete m_window;
}

void DashboardApplication::connectTo(const QString &url, const QByteArray &token,
                                     const NodeTrust &trust)
{
    m_settings.setLastUrl(url);
    m_settings.setToken(token);
    m_settings.setCaFile(trust.caFile);
    m_settings.setFailoverHosts(trust.failoverHosts);
    m_connectedNode.clear();
    if (!m_connection->connectTo(url, token, m_settings.knownEndpoints(), trust)) {
        m_window->showProblem(m_connection->stateText());
    }
}

void DashboardApplication::onStateChanged(const ConnectionState &state)
{
    const bool connected = state.kind == ConnectionState::Kind::Connected;
    m_window->setConnectionState(state.text(), connected);
    if (connected && state.nodeId != m_connectedNode) {
        m_connectedNode = state.nodeId;
        refreshTenants(); // a new node answers: read the list from it
    }
    if (state.kind == ConnectionState::Kind::Failed && m_screenshots) {
        finishScreenshots(2, state.text());
    }
}

void DashboardApplication::onSnapshot(const api::ClusterSnapshot &snapshot)
{
    // In steps: at 10,000 tenants one model's update and what its views do with it is all the
    // GUI thread can afford in one turn of the event loop.
    m_models->applyInSteps(snapshot);
}

void DashboardApplication::onSnapshotApplied()
{
    m_window->setSnapshotTime(m_models->takenAtMs(), m_models->answeredBy());
    ++m_snapshotsApplied;
    checkScreenshotsReady();
}

void DashboardApplication::refreshTenants()
{
    TenantsPage *page = m_window->tenantsPage();
    page->setBusy(true);
    TenantListReply *reply = m_connection->adminClient()->listTenants();
    connect(reply, &TenantListReply::succeeded, this,
            [this, page](const QList<api::TenantSummary> &tenants) {
                m_models->tenants()->setTenants(tenants);
                page->showDone(tr("%n tenant(s).", nullptr, static_cast<int>(tenants.size())));
                m_tenantsLoaded = true;
                checkScreenshotsReady();
            });
    connect(reply, &AdminReply::failed, page,
            [page](const ApiError &error) { page->showError(error.text); });
    connect(reply, &AdminReply::finished, page, [page] { page->setBusy(false); });
}

void DashboardApplication::writeConfig(const ConfigEdit &edit)
{
    ConfigPage *page = m_window->configPage();
    page->setBusy(true);
    AdminClient *client = m_connection->adminClient();
    ConfigWriteReply *reply = edit.ttl
            ? client->putTemporaryConfig(edit.key, edit.valueJson, edit.expectedRevision, *edit.ttl)
            : client->putConfig(edit.key, edit.valueJson, edit.expectedRevision);
    connect(reply, &ConfigWriteReply::written, page, &ConfigPage::showWritten);
    connect(reply, &ConfigWriteReply::conflicted, page,
            [page, edit](const ConfigConflict &conflict) {
                page->showConflict(edit, conflict.exists ? conflict.current.value : QByteArray(),
                                   conflict.exists ? conflict.current.modRevision : 0);
            });
    connect(reply, &AdminReply::failed, page,
            [page](const ApiError &error) { page->showError(error.text); });
    connect(reply, &AdminReply::finished, page, [page] { page->setBusy(false); });
}

void DashboardApplication::deleteConfig(const QString &key, qint64 expectedRevision)
{
    ConfigPage *page = m_window->configPage();
    page->setBusy(true);
    ConfigWriteReply *reply = m_connection->adminClient()->deleteConfig(key, expectedRevision);
    connect(reply, &ConfigWriteReply::written, page,
            [page, key] { page->showError(tr("Deleted %1.").arg(key)); });
    connect(reply, &ConfigWriteReply::conflicted, page, [page](const ConfigConflict &conflict) {
        page->showError(tr("%1 changed meanwhile (revision %2): nothing was deleted.")
                                .arg(conflict.key)
                                .arg(conflict.current.modRevision));
    });
    connect(reply, &AdminReply::failed, page,
            [page](const ApiError &error) { page->showError(error.text); });
    connect(reply, &AdminReply::finished, page, [page] { page->setBusy(false); });
}

void DashboardApplication::createTenant(const TenantChanges &tenant)
{
    TenantsPage *page = m_window->tenantsPage();
    page->setBusy(true);
    TenantReply *reply = m_connection->adminClient()->createTenant(tenant);
    connect(reply, &TenantReply::succeeded, this, [this, page](const api::TenantSummary &created) {
        m_models->tenants()->upsertTenant(created);
        page->showDone(tr("Created %1.").arg(created.externalId));
    });
    connect(reply, &AdminReply::failed, page,
            [page](const ApiError &error) { page->showError(error.text); });
    connect(reply, &AdminReply::finished, page, [page] { page->setBusy(false); });
}

void DashboardApplication::updateTenant(const QString &externalId, const TenantChanges &changes)
{
    TenantsPage *page = m_window->tenantsPage();
    page->setBusy(true);
    TenantReply *reply = m_connection->adminClient()->updateTenant(externalId, changes);
    connect(reply, &TenantReply::succeeded, this, [this, page](const api::TenantSummary &updated) {
        m_models->tenants()->upsertTenant(updated);
        page->showDone(tr("Saved %1.").arg(updated.externalId));
    });
    connect(reply, &AdminReply::failed, page,
            [page](const ApiError &error) { page->showError(error.text); });
    connect(reply, &AdminReply::finished, page, [page] { page->setBusy(false); });
}

void DashboardApplication::suspendTenant(const QString &externalId, bool suspended)
{
    TenantsPage *page = m_window->tenantsPage();
    page->setBusy(true);
    TenantReply *reply = m_connection->adminClient()->setTenantSuspended(externalId, suspended);
    connect(reply, &TenantReply::succeeded, page, [page, externalId, suspended] {
        page->showDone(suspended ? tr("Suspended %1: its clients are disconnected.").arg(externalId)
                                 : tr("Resumed %1.").arg(externalId));
    });
    connect(reply, &AdminReply::failed, page,
            [page](const ApiError &error) { page->showError(error.text); });
    connect(reply, &AdminReply::finished, page, [page] { page->setBusy(false); });
}

QStringList DashboardApplication::screenshotNames()
{
    return { QStringLiteral("nodes.png"), QStringLiteral("placement.png"),
             QStringLiteral("message-flow.png"), QStringLiteral("configuration.png"),
             QStringLiteral("tenants.png") };
}

QString DashboardApplication::summaryName()
{
    return QStringLiteral("summary.json");
}

void DashboardApplication::takeScreenshots(const QString &directory, int liveUpdates, int timeoutMs,
                                           std::function<void(int exitCode)> done)
{
    m_screenshots = std::make_unique<ScreenshotJob>(
            ScreenshotJob{ directory, m_snapshotsApplied + 1 + liveUpdates, std::move(done) });
    QTimer::singleShot(timeoutMs, this, [this, timeoutMs] {
        if (m_screenshots) {
            finishScreenshots(3,
                              tr("No full picture within %1 s (%2 snapshot(s) received).")
                                      .arg(timeoutMs / 1000)
                                      .arg(m_snapshotsApplied));
        }
    });
    checkScreenshotsReady();
}

void DashboardApplication::checkScreenshotsReady()
{
    if (!m_screenshots || m_snapshotsApplied < m_screenshots->snapshotsNeeded || !m_tenantsLoaded) {
        return;
    }
    const QDir directory(m_screenshots->directory);
    if (!directory.mkpath(QStringLiteral("."))) {
        finishScreenshots(4, tr("Cannot create %1.").arg(m_screenshots->directory));
        return;
    }
    QTabWidget *tabs = m_window->tabs();
    const QStringList names = screenshotNames();
    for (int i = 0; i < tabs->count() && i < names.size(); ++i) {
        tabs->setCurrentIndex(i);
        const QString file = directory.filePath(names[i]);
        if (!m_window->grab().save(file, "PNG")) {
            finishScreenshots(4, tr("Cannot write %1.").arg(file));
            return;
        }
        qCInfo(lcDashboard) << "wrote" << file;
    }
    tabs->setCurrentIndex(0);
    // What the models show, for scripts and tests that check the report without reading pixels.
    const QString summaryFile = directory.filePath(summaryName());
    QSaveFile summary(summaryFile);
    if (!summary.open(QIODevice::WriteOnly)
        || summary.write(QJsonDocument(modelSummary(*m_models, m_connection->stateText()))
                                 .toJson(QJsonDocument::Indented))
                < 0
        || !summary.commit()) {
        finishScreenshots(4, tr("Cannot write %1.").arg(summaryFile));
        return;
    }
    qCInfo(lcDashboard) << "wrote" << summaryFile;
    finishScreenshots(0, QString());
}

void DashboardApplication::finishScreenshots(int exitCode, const QString &problem)
{
    if (!m_screenshots) {
        return;
    }
    if (!problem.isEmpty()) {
        qCCritical(lcDashboard).noquote() << problem;
    }
    const std::unique_ptr<ScreenshotJob> job = std::move(m_screenshots);
    job->done(exitCode);
}

} // namespace rt::dashboard
