#include "server/app/config.h"

#include <QFile>
#include <QTest>

// The README's configuration table and the packaged environment file are renderings of the
// option table in server/app/config.cpp: they must be exactly what it renders, so that no
// option, default or meaning drifts. With RT_UPDATE_DOCS=1 the test rewrites both files
// instead (scripts/update-options-docs.sh).
class OptionDocsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readmeTableIsTheOptionTable();
    void environmentFileIsTheOptionTable();
    void everyOptionHasItsDefaultInTheRenderings();
};

namespace {

const QString Begin = QStringLiteral("<!-- options:begin (generated from server/app/config.cpp: "
                                     "scripts/update-options-docs.sh) -->\n");
const QString End = QStringLiteral("<!-- options:end -->");

bool updating()
{
    return qEnvironmentVariable("RT_UPDATE_DOCS") == QLatin1String("1");
}

QString readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

bool writeFile(const QString &path, const QString &text)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate)
            && file.write(text.toUtf8()) == text.toUtf8().size();
}

} // namespace

void OptionDocsTest::readmeTableIsTheOptionTable()
{
    const QString path = QStringLiteral(RT_SOURCE_DIR "/README.md");
    QString readme = readFile(path);
    const qsizetype begin = readme.indexOf(Begin);
    const qsizetype end = readme.indexOf(End);
    QVERIFY2(begin >= 0 && end > begin, "README.md has no options:begin/options:end markers");
    const qsizetype from = begin + Begin.size();
    const QString table = readme.mid(from, end - from);
    const QString expected = rt::app::optionsMarkdown();
    if (updating() && table != expected) {
        readme.replace(from, end - from, expected);
        QVERIFY(writeFile(path, readme));
        return;
    }
    QVERIFY2(table == expected,
             "README.md's option table differs from server/app/config.cpp's: run "
             "scripts/update-options-docs.sh");
}

void OptionDocsTest::environmentFileIsTheOptionTable()
{
    const QString path = QStringLiteral(RT_SOURCE_DIR "/packaging/realtime-server.env");
    const QString expected = rt::app::environmentTemplate();
    if (updating() && readFile(path) != expected) {
        QVERIFY(writeFile(path, expected));
        return;
    }
    QVERIFY2(readFile(path) == expected,
             "packaging/realtime-server.env differs from server/app/config.cpp's option table: "
             "run scripts/update-options-docs.sh");
}

void OptionDocsTest::everyOptionHasItsDefaultInTheRenderings()
{
    // A rendering that dropped the defaults would still match itself: check a few by value.
    const QString markdown = rt::app::optionsMarkdown();
    QVERIFY(markdown.contains(QStringLiteral("| `PORT` | `--port` | `4000` |")));
    QVERIFY(markdown.contains(
            QStringLiteral("| `TENANT_CACHE_EXPIRATION_IN_MS` | `--tenant-cache-expiration-in-ms` "
                           "| `30000` |")));
    const QString env = rt::app::environmentTemplate();
    QVERIFY(env.contains(QStringLiteral("\n#PORT=4000\n")));
    QVERIFY(env.contains(QStringLiteral("\n#CLUSTER_LEASE_TTL_S=10\n")));
    const rt::app::ServerConfig defaults = rt::app::defaultServerConfig();
    QCOMPARE(defaults.port, quint16(4000));
    QCOMPARE(defaults.tenantCacheExpirationMs, 30'000);
    QCOMPARE(defaults.cluster.leaseTtlSeconds, 10);
}

QTEST_GUILESS_MAIN(OptionDocsTest)
#include "tst_option_docs.moc"
