#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QSet>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

namespace {

const QString Binary = QStringLiteral(RT_SERVER_BINARY);
const QString EnvTemplate = QStringLiteral(RT_ENV_TEMPLATE);

struct Outcome
{
    int exitCode = -1;
    QString out;
    QString err;
};

} // namespace

// Runs the built realtime-server: `--check-config` must parse exactly as a start does, answer
// with one line and an exit code, and neither bind its port nor touch its data directory. Also
// keeps packaging/realtime-server.env (the template installed to /etc) in step with --help.
class CheckConfigTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void validConfiguration();
    void neitherBindsNorOpensTheDatabase();
    void invalidConfiguration_data();
    void invalidConfiguration();
    void envTemplateListsEveryOption();

private:
    Outcome run(const QStringList &arguments, const QStringList &environment);

    std::unique_ptr<QTemporaryDir> m_dir;
    QStringList m_variables; // every environment variable --help documents
    QProcessEnvironment m_base;
};

Outcome CheckConfigTest::run(const QStringList &arguments, const QStringList &environment)
{
    QProcessEnvironment processEnvironment = m_base;
    for (const QString &pair : environment) {
        const qsizetype equals = pair.indexOf(u'=');
        processEnvironment.insert(pair.left(equals), pair.mid(equals + 1));
    }
    QProcess process;
    process.setProcessEnvironment(processEnvironment);
    process.setWorkingDirectory(m_dir->path());
    process.start(Binary, arguments);
    Outcome outcome;
    if (!process.waitForFinished(30'000) || process.exitStatus() != QProcess::NormalExit) {
        process.kill();
        process.waitForFinished();
        return outcome;
    }
    outcome.exitCode = process.exitCode();
    outcome.out = QString::fromUtf8(process.readAllStandardOutput());
    outcome.err = QString::fromUtf8(process.readAllStandardError());
    return outcome;
}

void CheckConfigTest::initTestCase()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    QVERIFY2(QFile::exists(Binary), qPrintable(Binary));

    // The variables --help documents; none of them may leak in from the test's environment.
    m_base = QProcessEnvironment::systemEnvironment();
    const Outcome help = run({ QStringLiteral("--help") }, {});
    QCOMPARE(help.exitCode, 0);
    static const QRegularExpression variable(QStringLiteral("^      \\[([A-Z0-9_]+)\\]"),
                                             QRegularExpression::MultilineOption);
    for (QRegularExpressionMatchIterator it = variable.globalMatch(help.out); it.hasNext();) {
        m_variables.append(it.next().captured(1));
    }
    QVERIFY2(m_variables.size() > 30, qPrintable(help.out));
    QVERIFY(m_variables.contains(QStringLiteral("API_JWT_SECRET")));
    for (const QString &name : std::as_const(m_variables)) {
        m_base.remove(name);
    }
}

void CheckConfigTest::validConfiguration()
{
    const QString data = m_dir->filePath(QStringLiteral("valid-data"));
    const Outcome outcome =
            run({ QStringLiteral("--check-config"), QStringLiteral("--port=4123") },
                { QStringLiteral("DATA_DIR=") + data, QStringLiteral("SEED_SELF_HOST=true"),
                  QStringLiteral("API_JWT_SECRET=the-secret") });
    QCOMPARE(outcome.exitCode, 0);
    QCOMPARE(outcome.err, QString());
    QCOMPARE(outcome.out,
             QStringLiteral("configuration ok: port 4123 on 0.0.0.0, control plane sqlite "
                            "%1/control-plane.sqlite3, seeded tenants: realtime-dev (self-host), "
                            "tenant API secret set, cluster single node\n")
                     .arg(QDir::cleanPath(data)));
}

void CheckConfigTest::neitherBindsNorOpensTheDatabase()
{
    // The port is taken and the data directory does not exist: a start would fail on the first
    // and create the second; a check does neither.
    QTcpServer holder;
    QVERIFY(holder.listen(QHostAddress::LocalHost));
    const QString data = m_dir->filePath(QStringLiteral("never-created"));
    const Outcome outcome =
            run({ QStringLiteral("--check-config") },
                { QStringLiteral("PORT=") + QString::number(holder.serverPort()),
                  QStringLiteral("LISTEN_ADDRESS=127.0.0.1"), QStringLiteral("DATA_DIR=") + data });
    QCOMPARE(outcome.exitCode, 0);
    QVERIFY2(outcome.out.startsWith(QLatin1String("configuration ok: port ")),
             qPrintable(outcome.out));
    QVERIFY(!QFileInfo::exists(data));
}

void CheckConfigTest::invalidConfiguration_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("environment");
    QTest::addColumn<QString>("expected");

    QTest::newRow("bad PORT from the environment")
            << QStringList() << QStringList{ QStringLiteral("PORT=abc") }
            << QStringLiteral("realtime-server: invalid PORT (--port): \"abc\"; expected an "
                              "integer from 0 to 65535\n");
    QTest::newRow("bad flag")
            << QStringList{ QStringLiteral("--log-level"), QStringLiteral("loud") } << QStringList()
            << QStringLiteral("realtime-server: invalid LOG_LEVEL (--log-level): \"loud\"; "
                              "expected debug, info, warning or error\n");
    QTest::newRow("self-host without secret")
            << QStringList() << QStringList{ QStringLiteral("SEED_SELF_HOST=true") }
            << QStringLiteral("realtime-server: SEED_SELF_HOST (--seed-self-host) needs "
                              "API_JWT_SECRET (--api-jwt-secret) or API_JWT_JWKS: the seeded "
                              "tenant verifies client tokens with it\n");
    QTest::newRow("postgres without key")
            << QStringList{ QStringLiteral("--db-host=db.local") } << QStringList()
            << QStringLiteral("realtime-server: invalid DB_ENC_KEY (--db-enc-key): \"\"; expected "
                              "a 16-byte key: tenant secrets in a PostgreSQL control plane are "
                              "encrypted with it\n");
}

void CheckConfigTest::invalidConfiguration()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, environment);
    QFETCH(QString, expected);

    const Outcome outcome = run(QStringList{ QStringLiteral("--check-config") } + arguments,
                                environment
                                        + QStringList{ QStringLiteral("DATA_DIR=")
                                                       + m_dir->filePath(QStringLiteral("d")) });
    QCOMPARE(outcome.exitCode, 2);
    QCOMPARE(outcome.out, QString());
    QCOMPARE(outcome.err, expected);
}

void CheckConfigTest::envTemplateListsEveryOption()
{
    QFile file(EnvTemplate);
    QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(EnvTemplate));
    const QString text = QString::fromUtf8(file.readAll());

    // Every option appears as a commented-out assignment ("#NAME=" or "# NAME=") ...
    QSet<QString> listed;
    static const QRegularExpression assignment(QStringLiteral("^#? ?([A-Z][A-Z0-9_]*)="),
                                               QRegularExpression::MultilineOption);
    for (QRegularExpressionMatchIterator it = assignment.globalMatch(text); it.hasNext();) {
        listed.insert(it.next().captured(1));
    }
    for (const QString &name : std::as_const(m_variables)) {
        QVERIFY2(listed.contains(name),
                 qPrintable(name + QLatin1String(" is missing in ") + EnvTemplate));
    }
    // ... nothing else is offered, and nothing is set: the template only documents.
    for (const QString &name : std::as_const(listed)) {
        QVERIFY2(m_variables.contains(name),
                 qPrintable(name + QLatin1String(" in ") + EnvTemplate
                            + QLatin1String(" is not an option of realtime-server --help")));
    }
    static const QRegularExpression active(QStringLiteral("^[A-Z][A-Z0-9_]*="),
                                           QRegularExpression::MultilineOption);
    QVERIFY2(!active.match(text).hasMatch(), qPrintable(active.match(text).captured(0)));
}

QTEST_GUILESS_MAIN(CheckConfigTest)
#include "tst_check_config.moc"
