// realtime-server: one node of a qtrealtime cluster (see README.md and --help).
#include "server/app/config.h"
#include "server/app/server.h"
#include "server/app/unix_signals.h"

#include <QCoreApplication>
#include <QLoggingCategory>

#include <cstdio>
#include <exception>

namespace {

void applyLogLevel(const QString &level)
{
    QString rules = QStringLiteral("qt.*.debug=false\n");
    if (level != QLatin1String("debug")) {
        rules += QStringLiteral("*.debug=false\n");
    }
    if (level == QLatin1String("warning") || level == QLatin1String("error")) {
        rules += QStringLiteral("*.info=false\n");
    }
    if (level == QLatin1String("error")) {
        rules += QStringLiteral("*.warning=false\n");
    }
    QLoggingCategory::setFilterRules(rules);
}

int run(int argc, char **argv)
{
    // Qt's GLib event dispatcher slows down with thousands of sockets per thread
    // (design/performance.md §4.6); the UNIX dispatcher does not. Respect an explicit choice.
    if (qEnvironmentVariableIsEmpty("QT_NO_GLIB")) {
        qputenv("QT_NO_GLIB", "1");
    }
    qSetMessagePattern(QStringLiteral(
            "%{time yyyy-MM-ddThh:mm:ss.zzz} %{if-debug}debug%{endif}%{if-info}info %{endif}"
            "%{if-warning}warn %{endif}%{if-critical}error%{endif}%{if-fatal}fatal%{endif} "
            "%{category}: %{message}"));
    QCoreApplication application(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("realtime-server"));
    QCoreApplication::setApplicationVersion(QStringLiteral(QTREALTIME_VERSION));

    rt::Result<rt::app::ConfigRequest> request =
            rt::app::parseConfig(QCoreApplication::arguments(), rt::app::processEnvironment());
    if (!request) {
        std::fprintf(stderr, "realtime-server: %s\n", qPrintable(request.error().message));
        return 2;
    }
    if (request->action == rt::app::ConfigRequest::Action::ShowHelp) {
        std::fputs(qPrintable(request->helpText), stdout);
        return 0;
    }
    if (request->action == rt::app::ConfigRequest::Action::ShowVersion) {
        std::printf("realtime-server %s\n", QTREALTIME_VERSION);
        return 0;
    }
    if (request->action == rt::app::ConfigRequest::Action::CheckConfig) {
        // Parsed exactly as a start, but nothing is bound or opened.
        std::printf("%s\n", qPrintable(rt::app::configSummary(request->config)));
        return 0;
    }
    applyLogLevel(request->config.logLevel);

    rt::app::UnixSignals signals;
    rt::app::Server server(request->config);
    int exitCode = 0;
    QObject::connect(&server, &rt::app::Server::failed, &application,
                     [&exitCode](const QString &message) {
                         std::fprintf(stderr, "realtime-server: %s\n", qPrintable(message));
                         exitCode = 1;
                         QCoreApplication::exit(1);
                     });
    QObject::connect(&signals, &rt::app::UnixSignals::terminationRequested, &application,
                     [&server](int) {
                         server.stop();
                         QCoreApplication::quit();
                     });
    QObject::connect(&signals, &rt::app::UnixSignals::reloadRequested, &server,
                     &rt::app::Server::reloadCertificates);
    server.start();
    const int loopResult = QCoreApplication::exec();
    server.stop();
    return exitCode != 0 ? exitCode : loopResult;
}

} // namespace

int main(int argc, char **argv)
{
    // Errors are Results, not exceptions; if Qt or the standard library throws anyway (say
    // std::bad_alloc), say so on stderr rather than terminate without a word.
    try {
        return run(argc, argv);
    } catch (const std::exception &error) {
        std::fprintf(stderr, "realtime-server: fatal: %s\n", error.what());
    } catch (...) {
        std::fprintf(stderr, "realtime-server: fatal: unknown exception\n");
    }
    return 70; // EX_SOFTWARE
}
