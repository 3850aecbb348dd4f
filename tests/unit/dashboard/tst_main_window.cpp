// The dashboard's main window: it shows, translated, and reports no connection yet.
#include "dashboard/views/main_window.h"

#include <QApplication>
#include <QLocale>
#include <QMenuBar>
#include <QTest>
#include <QTranslator>

class MainWindowTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void showsWithoutAConnection()
    {
        rt::dashboard::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCOMPARE(window.connectionStateText(), QStringLiteral("Not connected"));
        QCOMPARE(window.windowTitle(), QStringLiteral("qtrealtime dashboard"));
    }

    void everyStringIsTranslated_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("title");
        QTest::addColumn<QString>("state");
        QTest::newRow("de") << QStringLiteral("de") << QStringLiteral("qtrealtime-Dashboard")
                            << QStringLiteral("Nicht verbunden");
        QTest::newRow("fr") << QStringLiteral("fr") << QStringLiteral("Tableau de bord qtrealtime")
                            << QStringLiteral("Non connecté");
    }
    void everyStringIsTranslated()
    {
        QFETCH(QString, language);
        QFETCH(QString, title);
        QFETCH(QString, state);
        QTranslator translator;
        QVERIFY(translator.load(QLocale(language), QStringLiteral("realtime_dashboard"),
                                QStringLiteral("_"), QStringLiteral(":/i18n")));
        QVERIFY(QCoreApplication::installTranslator(&translator));
        rt::dashboard::MainWindow window;
        QCOMPARE(window.windowTitle(), title);
        QCOMPARE(window.connectionStateText(), state);
        // Menus are translated too (no English menu title left).
        const QList<QAction *> menus = window.menuBar()->actions();
        QVERIFY(!menus.isEmpty());
        for (const QAction *menu : menus) {
            QVERIFY2(menu->text() != QStringLiteral("&File")
                             && menu->text() != QStringLiteral("&Help"),
                     qPrintable(menu->text()));
        }
        QCoreApplication::removeTranslator(&translator);
    }
};

QTEST_MAIN(MainWindowTest)
#include "tst_main_window.moc"
