#include "tests/support/etcd/etcd_env.h"

#include <QFile>
#include <QProcess>
#include <QTest>

namespace rt::testsupport {

namespace {

constexpr int ScriptTimeoutMs = 60'000;

// KEY=value lines as printf %q writes them; endpoints and ports need no unquoting.
QHash<QString, QString> parseEnvFile(const QString &path, bool *ok)
{
    QHash<QString, QString> values;
    QFile file(path);
    *ok = file.open(QIODevice::ReadOnly | QIODevice::Text);
    if (!*ok) {
        return values;
    }
    while (!file.atEnd()) {
        const QString line = QString::fromUtf8(file.readLine()).trimmed();
        const qsizetype equals = line.indexOf(QLatin1Char('='));
        if (equals > 0) {
            values.insert(line.left(equals), line.mid(equals + 1));
        }
    }
    return values;
}

} // namespace

std::optional<EtcdEnv> EtcdEnv::fromEnvironment(QString *error)
{
    const QString path = qEnvironmentVariable(kEtcdEnvVariable);
    if (path.isEmpty()) {
        if (error) {
            *error = QStringLiteral("%1 is not set (run the suite through ctest: the \"etcd\" "
                                    "fixture starts the server)")
                             .arg(QLatin1String(kEtcdEnvVariable));
        }
        return std::nullopt;
    }
    return fromFile(path, error);
}

std::optional<EtcdEnv> EtcdEnv::fromFile(const QString &path, QString *error)
{
    bool ok = false;
    const QHash<QString, QString> values = parseEnvFile(path, &ok);
    EtcdEnv env;
    env.envFile = path;
    env.endpoints = values.value(QStringLiteral("RT_ETCD_ENDPOINTS"));
    env.clientPort = values.value(QStringLiteral("RT_ETCD_CLIENT_PORT")).toInt();
    if (!ok || env.endpoints.isEmpty()) {
        if (error) {
            *error = QStringLiteral("cannot read RT_ETCD_ENDPOINTS from %1").arg(path);
        }
        return std::nullopt;
    }
    return env;
}

ScratchEtcd::ScratchEtcd() = default;

ScratchEtcd::~ScratchEtcd()
{
    if (m_dir.isValid()) {
        run(QStringLiteral("stop"), nullptr);
    }
}

bool ScratchEtcd::start(QString *error)
{
    if (!m_dir.isValid()) {
        if (error) {
            *error = QStringLiteral("cannot create a temporary directory");
        }
        return false;
    }
    if (!run(QStringLiteral("start"), error)) {
        return false;
    }
    m_env = EtcdEnv::fromFile(m_dir.filePath(QStringLiteral("etcd/etcd.env")), error);
    return m_env.has_value();
}

bool ScratchEtcd::halt(QString *error)
{
    return run(QStringLiteral("halt"), error);
}

bool ScratchEtcd::resume(QString *error)
{
    return run(QStringLiteral("resume"), error);
}

bool ScratchEtcd::run(const QString &action, QString *error)
{
    const QString script = qEnvironmentVariable(kEtcdScriptVariable);
    if (script.isEmpty()) {
        if (error) {
            *error = QStringLiteral("%1 is not set").arg(QLatin1String(kEtcdScriptVariable));
        }
        return false;
    }
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(QStringLiteral("bash"),
                  { script, action, m_dir.filePath(QStringLiteral("etcd")) });
    const bool finished = QTest::qWaitFor(
            [&process] { return process.state() == QProcess::NotRunning; }, ScriptTimeoutMs);
    const bool ok =
            finished && process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
    if (!ok && error) {
        *error = QStringLiteral("etcd-cluster.sh %1 failed: %2")
                         .arg(action, QString::fromUtf8(process.readAll()).trimmed());
    }
    return ok;
}

} // namespace rt::testsupport
