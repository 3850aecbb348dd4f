// realtime-dashboard: the operators' desktop application.
//
//   realtime-dashboard [--connect URL --token TOKEN] [--ca-file PEM] [--failover-hosts LIST]
//                      [--language de]
//   realtime-dashboard --connect URL --token TOKEN --screenshot DIR   (report mode; works with
//                                                                      QT_QPA_PLATFORM=offscreen)
#include "dashboard/api/failover_allowlist.h"
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
#include <optional>

namespace {

// What the command line asks for; an option not given is nullopt (or empty).
struct CommandLine
{
    std::optional<QString> url;
    std::optional<QByteArray> token;
    std::optional<QString> caFile;
    std::optional<QStringList> failoverHosts;
    std::optional<QString> screenshotDirectory;
    QString language;
};

// Exits on --help, --version and unknown options, as QCommandLineParser::process() does.
CommandLine parseCommandLine(const QApplication &application)
{
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
                                    "API_JWT_SECRET, role service_role)."),
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
    const QCommandLineOption caFileOption(
            QStringLiteral("ca-file"),
            QApplication::translate("main",
                                    "Trust only the certificate authorities in <pem> for https "
                                    "nodes (default: the system's)."),
            QStringLiteral("pem"));
    const QCommandLineOption failoverHostsOption(
            QStringLiteral("failover-hosts"),
            QApplication::translate("main",
                                    "Fail over only to these hosts (comma-separated names, "
                                    "*.domain, addresses or subnets; default: the cluster's "
                                    "members under the same scheme)."),
            QStringLiteral("list"));
    parser.addOptions({ connectOption, tokenOption, caFileOption, failoverHostsOption,
                        screenshotOption, languageOption });
    parser.process(application);

    CommandLine commandLine;
    if (parser.isSet(connectOption)) {
        commandLine.url = parser.value(connectOption);
    }
    if (parser.isSet(tokenOption)) {
        commandLine.token = parser.value(tokenOption).toUtf8();
    }
    if (parser.isSet(caFileOption)) {
        commandLine.caFile = parser.value(caFileOption);
    }
    if (parser.isSet(failoverHostsOption)) {
        commandLine.failoverHosts =
                rt::dashboard::FailoverAllowlist::splitPatterns(parser.value(failoverHostsOption));
    }
    if (parser.isSet(screenshotOption)) {
        commandLine.screenshotDirectory = parser.value(screenshotOption);
    }
    commandLine.language = parser.value(languageOption);
    return commandLine;
}

// Installs the dashboard's translations and Qt's own for `locale`, where there are any.
void installTranslators(const QLocale &locale, QTranslator &translator, QTranslator &qtTranslator)
{
    if (translator.load(locale, QStringLiteral("realtime_dashboard"), QStringLiteral("_"),
                        QStringLiteral(":/i18n"))) {
        QApplication::installTranslator(&translator);
    }
    // Qt's own texts (standard buttons, context menus, file dialogs) in the same language, from
    // Qt's translations where installed (Debian: qt6-translations-l10n); English otherwise.
    if (qtTranslator.load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                          QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
        QApplication::installTranslator(&qtTranslator);
    }
}

// Connects (and in report mode takes the screenshots), or asks where to connect once the event
// loop runs. Returns false when report mode lacks the URL or the token.
bool startSession(rt::dashboard::DashboardApplication &dashboard, const CommandLine &commandLine,
                  const rt::dashboard::DashboardSettings &settings)
{
    const QString url = commandLine.url ? *commandLine.url : settings.lastUrl();
    const QByteArray token = commandLine.token ? *commandLine.token : settings.token();
    const rt::dashboard::NodeTrust trust{
        commandLine.caFile ? *commandLine.caFile : settings.caFile(),
        commandLine.failoverHosts ? *commandLine.failoverHosts : settings.failoverHosts(),
    };
    if (commandLine.screenshotDirectory) {
        if (url.isEmpty() || token.isEmpty()) {
            std::fputs(qPrintable(QApplication::translate(
                               "main", "--screenshot needs --connect and --token.\n")),
                       stderr);
            return false;
        }
        dashboard.connectTo(url, token, trust);
        dashboard.takeScreenshots(*commandLine.screenshotDirectory, 3, 60'000,
                                  [](int exitCode) { QApplication::exit(exitCode); });
    } else if (!url.isEmpty() && !token.isEmpty()) {
        dashboard.connectTo(url, token, trust);
    } else {
        QTimer::singleShot(0, dashboard.window(), [&dashboard, url, token, trust] {
            dashboard.window()->openConnectDialog(url, token, trust);
        });
    }
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    QApplication application(argc, argv);
    QApplication::setApplicationName(QStringLiteral("realtime-dashboard"));
    QApplication::setOrganizationName(QStringLiteral("qtrealtime"));
    QApplication::setApplicationVersion(QStringLiteral(QTREALTIME_VERSION));
    const CommandLine commandLine = parseCommandLine(application);

    rt::dashboard::DashboardSettings settings;
    // The language: the command line, else the one chosen in the app, else the system's.
    QString language = commandLine.language;
    if (language.isEmpty()) {
        language = settings.language();
    }
    const QLocale locale = language.isEmpty() ? QLocale() : QLocale(language);
    QTranslator translator;
    QTranslator qtTranslator;
    installTranslators(locale, translator, qtTranslator);

    rt::dashboard::DashboardApplication dashboard(settings);
    dashboard.window()->show();
    if (!startSession(dashboard, commandLine, settings)) {
        return 64;
    }
    return QApplication::exec();
}
