#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

#include <memory>

class QSettings;

namespace rt::dashboard {

// What the dashboard remembers between runs (QSettings): the last node URL and operator token
// (issue 6: "URL + token remembered"), the cluster's other endpoints from the last snapshot (so
// a dead first node does not strand the next start), and the chosen interface language.
// Every setter writes through at once. Lives on the GUI thread.
class DashboardSettings
{
public:
    // The application's settings (organisation and application name of QCoreApplication).
    DashboardSettings();
    // A settings file of its own (INI format): tests, portable setups.
    explicit DashboardSettings(const QString &iniFile);
    ~DashboardSettings();
    DashboardSettings(const DashboardSettings &) = delete;
    DashboardSettings &operator=(const DashboardSettings &) = delete;

    QString lastUrl() const;
    void setLastUrl(const QString &url);

    // The token is stored as plain text in the user's settings file (as the issue asks):
    // whoever can read that file can act as the operator. QSettings keeps it in the user's own
    // configuration directory (~/.config/qtrealtime/realtime-dashboard.conf), which only the
    // user should be able to read; a keychain would be the next step (not packaged on Qt 6.4).
    QByteArray token() const;
    void setToken(const QByteArray &token);
    // Forgets the token (e.g. "remember token" unticked).
    void clearToken();

    // The PEM file of the CAs trusted for https nodes; empty: the system's.
    QString caFile() const;
    void setCaFile(const QString &file);
    // The hosts the dashboard may fail over to (patterns); empty: the cluster's members.
    QStringList failoverHosts() const;
    void setFailoverHosts(const QStringList &hosts);

    QList<QUrl> knownEndpoints() const;
    void setKnownEndpoints(const QList<QUrl> &endpoints);

    // A locale name ("de", "fr_FR"); empty: follow the system locale.
    QString language() const;
    void setLanguage(const QString &language);

    // Writes pending changes to storage now (QSettings also does so by itself).
    void sync();
    QString fileName() const;

private:
    std::unique_ptr<QSettings> m_settings;
};

} // namespace rt::dashboard
