#include "dashboard/app/dashboard_settings.h"

#include <QFile>
#include <QSettings>
#include <QStringList>

namespace rt::dashboard {

namespace {

const QString LastUrlKey = QStringLiteral("connection/last_url");
const QString TokenKey = QStringLiteral("connection/token");
const QString EndpointsKey = QStringLiteral("connection/known_endpoints");
const QString CaFileKey = QStringLiteral("connection/ca_file");
const QString FailoverHostsKey = QStringLiteral("connection/failover_hosts");
const QString LanguageKey = QStringLiteral("interface/language");

} // namespace

DashboardSettings::DashboardSettings() : m_settings(std::make_unique<QSettings>()) { }

DashboardSettings::DashboardSettings(const QString &iniFile)
    : m_settings(std::make_unique<QSettings>(iniFile, QSettings::IniFormat))
{ }

DashboardSettings::~DashboardSettings() = default;

QString DashboardSettings::lastUrl() const
{
    return m_settings->value(LastUrlKey).toString();
}

void DashboardSettings::setLastUrl(const QString &url)
{
    m_settings->setValue(LastUrlKey, url);
}

QByteArray DashboardSettings::token() const
{
    return m_settings->value(TokenKey).toString().toUtf8();
}

void DashboardSettings::setToken(const QByteArray &token)
{
    // As text, so the file stays readable and the value is not stored as @ByteArray(...).
    m_settings->setValue(TokenKey, QString::fromUtf8(token));
    // The file holds a secret now: readable by its owner only.
    m_settings->sync();
    QFile::setPermissions(m_settings->fileName(), QFile::ReadOwner | QFile::WriteOwner);
}

void DashboardSettings::clearToken()
{
    m_settings->remove(TokenKey);
}

QString DashboardSettings::caFile() const
{
    return m_settings->value(CaFileKey).toString();
}

void DashboardSettings::setCaFile(const QString &file)
{
    m_settings->setValue(CaFileKey, file);
}

QStringList DashboardSettings::failoverHosts() const
{
    return m_settings->value(FailoverHostsKey).toStringList();
}

void DashboardSettings::setFailoverHosts(const QStringList &hosts)
{
    m_settings->setValue(FailoverHostsKey, hosts);
}

QList<QUrl> DashboardSettings::knownEndpoints() const
{
    QList<QUrl> endpoints;
    const QStringList texts = m_settings->value(EndpointsKey).toStringList();
    for (const QString &text : texts) {
        const QUrl url(text, QUrl::StrictMode);
        if (url.isValid() && !url.host().isEmpty()) {
            endpoints.append(url);
        }
    }
    return endpoints;
}

void DashboardSettings::setKnownEndpoints(const QList<QUrl> &endpoints)
{
    QStringList texts;
    for (const QUrl &url : endpoints) {
        texts.append(url.toString());
    }
    m_settings->setValue(EndpointsKey, texts);
}

QString DashboardSettings::language() const
{
    return m_settings->value(LanguageKey).toString();
}

void DashboardSettings::setLanguage(const QString &language)
{
    if (language.isEmpty()) {
        m_settings->remove(LanguageKey);
    } else {
        m_settings->setValue(LanguageKey, language);
    }
}

void DashboardSettings::sync()
{
    m_settings->sync();
}

QString DashboardSettings::fileName() const
{
    return m_settings->fileName();
}

} // namespace rt::dashboard
