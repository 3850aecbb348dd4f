// realtime-dashboard: the operators' desktop application.
//
//   realtime-dashboard [--connect URL --token TOKEN] [--language de]
//   realtime-dashboard --connect URL --token TOKEN --screenshot DIR   (report mode; works with
//                                                                      QT_QPA_PLATFORM=offscreen)
#include "dashboard/app/dashboard_application.h"
#include "dashboard/app/dashboard_settings.h"
#include "dashboard/views/main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QLibraryInfo>
#include <QLocale>
#include <QTimer>
#include <QTranslator>

#include <cstdio>

int main(int argc, char **argv)
{
    QApplication application(argc, argv);
    QApplication::setApplicationName(QStringLiteral("realtime-dashboard"));
    QApplication::setOrganizationName(QStringLiteral("qtrealtime"));
    QApplication::setApplicationVersion(QStringLiteral(QTREALTIME_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
            QApplication::translate("main", "Operator dashboard for qtrealtime clusters."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption connectOption(
            QStringLiteral("connect"),
            QApplication::translate("main", "Connect to the node at <url> at start."),
            QStringLiteral("url"));
    const QCommandLineOption tokenOption(
            QStringLiteral("token"),
            QApplication::translate("main",
                                    "The operator token (a JWT signed with "
                                    "API_JWT_SECRET)."),
            QStringLiteral("token"));
    const QCommandLineOption screenshotOption(
            QStringLiteral("screenshot"),
            QApplication::translate("main",
                                    "Wait for the first snapshot and a few live "
                                    "updates, write one PNG per view into <dir>, exit."),
            QStringLiteral("dir"));
    const QCommandLineOption languageOption(
            QStringLiteral("language"),
            QApplication::translate("main",
                                    "Interface language (de, fr, en); default: the "
                                    "system's or the one chosen in the app."),
            QStringLiteral("locale"));
    parser.addOptions({ connectOption, tokenOption, screenshotOption, languageOption });
    parser.process(application);

    rt::dashboard::DashboardSettings settings;
    // The language: the command line, else the one chosen in the app, else the system's.
    QString language = parser.value(languageOption);
    if (language.isEmpty()) {
        language = settings.language();
    }
    const QLocale locale = language.isEmpty() ? QLocale() : QLocale(language);
    QTranslator translator;
    if (translator.load(locale, QStringLiteral("realtime_dashboard"), QStringLiteral("_"),
                        QStringLiteral(":/i18n"))) {
        QApplication::installTranslator(&translator);
    }
    // Qt's own texts (standard buttons, context menus, file dialogs) in the same language, from
    // Qt's translations where installed (Debian: qt6-translations-l10n); English otherwise.
    QTranslator qtTranslator;
    if (qtTranslator.load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                          QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
        QApplication::installTranslator(&qtTranslator);
    }

    rt::dashboard::DashboardApplication dashboard(settings);
    dashboard.window()->show();

    const QString url =
            parser.isSet(connectOption) ? parser.value(connectOption) : settings.lastUrl();
    const QByteArray token =
            parser.isSet(tokenOption) ? parser.value(tokenOption).toUtf8() : settings.token();
    if (parser.isSet(screenshotOption)) {
        if (url.isEmpty() || token.isEmpty()) {
            std::fputs(qPrintable(QApplication::translate(
                               "main", "--screenshot needs --connect and --token.\n")),
                       stderr);
            return 64;
        }
        dashboard.connectTo(url, token);
        dashboard.takeScreenshots(parser.value(screenshotOption), 3, 60'000,
                                  [](int exitCode) { QApplication::exit(exitCode); });
    } else if (!url.isEmpty() && !token.isEmpty()) {
        dashboard.connectTo(url, token);
    } else {
        QTimer::singleShot(0, dashboard.window(), [&dashboard, url, token] {
            dashboard.window()->openConnectDialog(url, token);
        });
    }
    return QApplication::exec();
}
