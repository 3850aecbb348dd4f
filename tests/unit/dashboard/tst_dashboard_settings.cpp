// What the dashboard remembers between runs, round-tripped through a settings file.
#include "dashboard/app/dashboard_settings.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using rt::dashboard::DashboardSettings;

class DashboardSettingsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void emptyAtFirst()
    {
        QTemporaryDir dir;
        const DashboardSettings settings(dir.filePath(QStringLiteral("dashboard.ini")));
        QVERIFY(settings.lastUrl().isEmpty());
        QVERIFY(settings.token().isEmpty());
        QVERIFY(settings.knownEndpoints().isEmpty());
        QVERIFY(settings.language().isEmpty());
        QVERIFY(settings.caFile().isEmpty());
        QVERIFY(settings.failoverHosts().isEmpty());
    }

    void roundTrip()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("dashboard.ini"));
        const QList<QUrl> endpoints{ QUrl(QStringLiteral("http://10.0.0.1:4000")),
                                     QUrl(QStringLiteral("https://[fd00::2]:4443")) };
        {
            DashboardSettings settings(file);
            settings.setLastUrl(QStringLiteral("http://10.0.0.1:4000"));
            settings.setToken("eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.sig");
            settings.setKnownEndpoints(endpoints);
            settings.setLanguage(QStringLiteral("de"));
            settings.setCaFile(QStringLiteral("/etc/realtime/cluster-ca.pem"));
            settings.setFailoverHosts(
                    { QStringLiteral("*.rt.internal"), QStringLiteral("10.0.0.0/8") });
            settings.sync();
        }
        // The token makes the file a secret: its owner alone may read it.
        QCOMPARE(QFile::permissions(file) & (QFile::ReadGroup | QFile::ReadOther),
                 QFile::Permissions());

        DashboardSettings reread(file);
        QCOMPARE(reread.lastUrl(), QStringLiteral("http://10.0.0.1:4000"));
        QCOMPARE(reread.token(),
                 QByteArray("eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.sig"));
        QCOMPARE(reread.knownEndpoints(), endpoints);
        QCOMPARE(reread.language(), QStringLiteral("de"));
        QCOMPARE(reread.caFile(), QStringLiteral("/etc/realtime/cluster-ca.pem"));
        QCOMPARE(reread.failoverHosts(),
                 (QStringList{ QStringLiteral("*.rt.internal"), QStringLiteral("10.0.0.0/8") }));

        reread.clearToken();
        reread.setLanguage(QString()); // back to the system's
        reread.setKnownEndpoints({ endpoints.at(0) });
        reread.sync();
        const DashboardSettings third(file);
        QVERIFY(third.token().isEmpty());
        QVERIFY(third.language().isEmpty());
        QCOMPARE(third.knownEndpoints(), QList<QUrl>{ endpoints.at(0) });
    }

    void unusableEndpointsAreSkipped()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("dashboard.ini"));
        QFile raw(file);
        QVERIFY(raw.open(QIODevice::WriteOnly));
        raw.write("[connection]\nknown_endpoints=http://node-a:4000, not a url, "
                  "http://node-b:4000\n");
        raw.close();
        const DashboardSettings settings(file);
        QCOMPARE(settings.knownEndpoints(),
                 (QList<QUrl>{ QUrl(QStringLiteral("http://node-a:4000")),
                               QUrl(QStringLiteral("http://node-b:4000")) }));
    }
};

QTEST_GUILESS_MAIN(DashboardSettingsTest)
#include "tst_dashboard_settings.moc"
