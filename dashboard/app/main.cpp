// realtime-dashboard: the operators' desktop application.
#include "dashboard/views/main_window.h"

#include <QApplication>
#include <QLocale>
#include <QTranslator>

int main(int argc, char **argv)
{
    QApplication application(argc, argv);
    QApplication::setApplicationName(QStringLiteral("realtime-dashboard"));
    QApplication::setOrganizationName(QStringLiteral("qtrealtime"));
    QApplication::setApplicationVersion(QStringLiteral(QTREALTIME_VERSION));

    // The interface follows the system locale when a translation exists for it.
    QTranslator translator;
    if (translator.load(QLocale(), QStringLiteral("realtime_dashboard"), QStringLiteral("_"),
                        QStringLiteral(":/i18n"))) {
        QApplication::installTranslator(&translator);
    }

    rt::dashboard::MainWindow window;
    window.show();
    return QApplication::exec();
}
