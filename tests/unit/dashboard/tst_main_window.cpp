// The dashboard's main window: it shows, translated, and reports no connection yet. The
// translations (translations/*.ts) are complete: no unfinished or empty message, the same
// placeholders and one accelerator where the source has them; and with the German translator
// loaded the window over a recorded snapshot shows German tabs and table headers.
#include "dashboard/models/snapshot_models.h"
#include "dashboard/views/config_page.h"
#include "dashboard/views/flow_page.h"
#include "dashboard/views/main_window.h"
#include "dashboard/views/nodes_page.h"
#include "dashboard/views/placement_page.h"
#include "dashboard/views/tenants_page.h"
#include "shared/api/cluster_snapshot.h"

#include <QApplication>
#include <QFile>
#include <QLocale>
#include <QMenuBar>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTranslator>
#include <QXmlStreamReader>

#include <memory>

namespace {

// One <message> of a .ts file.
struct TsMessage
{
    QString context;
    QString source;
    QString type; // the translation's type attribute: "" when finished
    QStringList translations; // one, or one per numerus form
    bool numerus = false;
    qint64 line = 0;
};

QList<TsMessage> readTs(const QString &path, QString *language)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        qFatal("cannot read %s", qPrintable(path));
    }
    QList<TsMessage> messages;
    QXmlStreamReader xml(&file);
    QString context;
    TsMessage message;
    while (!xml.atEnd()) {
        if (xml.readNext() != QXmlStreamReader::StartElement) {
            continue;
        }
        const auto name = xml.name();
        if (name == QLatin1String("TS")) {
            *language = xml.attributes().value(QLatin1String("language")).toString();
        } else if (name == QLatin1String("name")) {
            context = xml.readElementText();
        } else if (name == QLatin1String("message")) {
            message = TsMessage{ context,
                                 QString(),
                                 QString(),
                                 {},
                                 xml.attributes().value(QLatin1String("numerus"))
                                         == QLatin1String("yes"),
                                 xml.lineNumber() };
        } else if (name == QLatin1String("source")) {
            message.source = xml.readElementText();
        } else if (name == QLatin1String("translation")) {
            message.type = xml.attributes().value(QLatin1String("type")).toString();
            if (!message.numerus) {
                message.translations.append(xml.readElementText());
                messages.append(message);
                continue;
            }
            while (xml.readNextStartElement()) { // <numerusform>s
                message.translations.append(xml.readElementText());
            }
            messages.append(message);
        }
    }
    if (xml.hasError()) {
        qFatal("%s: %s", qPrintable(path), qPrintable(xml.errorString()));
    }
    return messages;
}

// The placeholders %1..%9 a text uses (each once, sorted).
QStringList placeholders(const QString &text)
{
    static const QRegularExpression pattern(QStringLiteral("%[1-9]"));
    QStringList found;
    for (auto it = pattern.globalMatch(text); it.hasNext();) {
        found.append(it.next().captured());
    }
    found.sort();
    found.removeDuplicates();
    return found;
}

// How many accelerators (a single &, not &&) a text has.
int accelerators(const QString &text)
{
    int count = 0;
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text[i] == u'&') {
            if (i + 1 < text.size() && text[i + 1] == u'&') {
                ++i;
            } else {
                ++count;
            }
        }
    }
    return count;
}

QStringList headers(const QTableView *table)
{
    QStringList out;
    const QAbstractItemModel *model = table->model();
    for (int column = 0; column < model->columnCount(); ++column) {
        out.append(model->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString());
    }
    return out;
}

} // namespace

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

    void tsFileIsComplete_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("language");
        QTest::addColumn<int>("pluralForms");
        QTest::newRow("de") << QStringLiteral("realtime_dashboard_de.ts") << QStringLiteral("de_DE")
                            << 2;
        QTest::newRow("fr") << QStringLiteral("realtime_dashboard_fr.ts") << QStringLiteral("fr_FR")
                            << 2;
    }
    void tsFileIsComplete()
    {
        QFETCH(QString, file);
        QFETCH(QString, language);
        QFETCH(int, pluralForms);
        QString fileLanguage;
        const QList<TsMessage> messages =
                readTs(QStringLiteral(RT_TRANSLATIONS_DIR "/") + file, &fileLanguage);
        QCOMPARE(fileLanguage, language);
        QVERIFY(messages.size() > 100); // the whole dashboard, not only the main window
        QStringList problems;
        for (const TsMessage &m : messages) {
            const QString where = QStringLiteral("%1:%2 [%3] \"%4\": ")
                                          .arg(file)
                                          .arg(m.line)
                                          .arg(m.context, m.source);
            if (!m.type.isEmpty()) { // unfinished, vanished, obsolete
                problems.append(where + m.type);
                continue;
            }
            if (m.numerus && m.translations.size() != pluralForms) {
                problems.append(where
                                + QStringLiteral("%1 plural forms").arg(m.translations.size()));
            }
            for (const QString &translation : m.translations) {
                if (translation.trimmed().isEmpty()) {
                    problems.append(where + QStringLiteral("empty translation"));
                } else if (placeholders(translation) != placeholders(m.source)) {
                    problems.append(
                            where
                            + QStringLiteral("placeholders %1 in \"%2\"")
                                      .arg(placeholders(translation).join(u' '), translation));
                } else if (m.source.contains(QLatin1String("%n"))
                           && !translation.contains(QLatin1String("%n"))) {
                    problems.append(where + QStringLiteral("no %n in \"%1\"").arg(translation));
                } else if (accelerators(translation) != accelerators(m.source)) {
                    problems.append(where
                                    + QStringLiteral("accelerators in \"%1\"").arg(translation));
                }
            }
        }
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(u'\n')));
    }

    void bothLanguagesHaveTheSameMessages()
    {
        QString language;
        const auto keys = [&language](const QString &file) {
            QStringList out;
            for (const TsMessage &m :
                 readTs(QStringLiteral(RT_TRANSLATIONS_DIR "/") + file, &language)) {
                out.append(m.context + u'|' + m.source);
            }
            out.sort();
            return out;
        };
        QCOMPARE(keys(QStringLiteral("realtime_dashboard_fr.ts")),
                 keys(QStringLiteral("realtime_dashboard_de.ts")));
    }

    void germanWindowOverASnapshot()
    {
        QFile file(QStringLiteral(RT_API_TEST_DATA "/snapshot-3-nodes.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const auto snapshot = rt::api::ClusterSnapshot::fromJson(file.readAll());
        QVERIFY(snapshot.ok());

        QTranslator translator;
        QVERIFY(translator.load(QLocale(QStringLiteral("de")), QStringLiteral("realtime_dashboard"),
                                QStringLiteral("_"), QStringLiteral(":/i18n")));
        QVERIFY(QCoreApplication::installTranslator(&translator));
        const auto uninstall =
                qScopeGuard([&translator] { QCoreApplication::removeTranslator(&translator); });
        const auto models = std::make_unique<rt::dashboard::SnapshotModels>();
        models->apply(*snapshot);
        const auto window = std::make_unique<rt::dashboard::MainWindow>(models.get());
        window->show();
        QVERIFY(QTest::qWaitForWindowExposed(window.get()));

        QStringList tabs;
        for (int i = 0; i < window->tabs()->count(); ++i) {
            tabs.append(window->tabs()->tabText(i));
        }
        QCOMPARE(tabs,
                 QStringList({ QStringLiteral("&Knoten"), QStringLiteral("&Platzierung"),
                               QStringLiteral("&Nachrichtenfluss"),
                               QStringLiteral("K&onfiguration"), QStringLiteral("&Mandanten") }));

        const QStringList nodes = headers(window->nodesPage()->table());
        QVERIFY2(nodes.contains(QStringLiteral("Knoten")), qPrintable(nodes.join(u',')));
        QVERIFY2(nodes.contains(QStringLiteral("Betriebszeit")), qPrintable(nodes.join(u',')));
        QVERIFY2(nodes.contains(QStringLiteral("Verfügbar")), qPrintable(nodes.join(u',')));
        const QStringList placement = headers(window->placementPage()->table());
        QVERIFY2(placement.contains(QStringLiteral("Mandant")), qPrintable(placement.join(u',')));
        QVERIFY2(placement.contains(QStringLiteral("Stream-Besitzer")),
                 qPrintable(placement.join(u',')));
        const QStringList links = headers(window->flowPage()->linkTable());
        QVERIFY2(links.contains(QStringLiteral("Von")) && links.contains(QStringLiteral("Nach")),
                 qPrintable(links.join(u',')));
        const QStringList config = headers(window->configPage()->table());
        QVERIFY2(config.contains(QStringLiteral("Schlüssel")), qPrintable(config.join(u',')));
        const QStringList tenants = headers(window->tenantsPage()->table());
        QVERIFY2(tenants.contains(QStringLiteral("Angelegt am")), qPrintable(tenants.join(u',')));
        // No header of any table is left in English.
        for (const QString &english :
             { QStringLiteral("Node"), QStringLiteral("Tenant"), QStringLiteral("Uptime"),
               QStringLiteral("Stream owner"), QStringLiteral("From"), QStringLiteral("Key"),
               QStringLiteral("Created"), QStringLiteral("Messages in/s") }) {
            for (const QStringList *table : { &nodes, &placement, &links, &config, &tenants }) {
                QVERIFY2(!table->contains(english), qPrintable(english));
            }
        }
        QCOMPARE(window->connectionStateText(), QStringLiteral("Nicht verbunden"));
    }
};

QTEST_MAIN(MainWindowTest)
#include "tst_main_window.moc"
