#pragma once

#include <QHash>
#include <QString>
#include <QTemporaryDir>

#include <optional>

// Access to the throwaway etcd of the integration tests (etcd-cluster.sh, started by the CTest
// fixture "etcd"), and private servers for tests that stop and restart etcd. Test code only;
// runs on the thread that creates it.
namespace rt::testsupport {

// The environment variables rt_add_etcd_test() sets.
inline constexpr char kEtcdEnvVariable[] = "RT_ETCD_ENV"; // <fixture dir>/etcd.env
inline constexpr char kEtcdScriptVariable[] = "RT_ETCD_SCRIPT"; // etcd-cluster.sh

struct EtcdEnv
{
    QString endpoints; // RT_ETCD_ENDPOINTS: comma-separated URLs, the value for ETCD_ENDPOINTS
    int clientPort = 0;
    QString envFile;

    // Reads the file that $RT_ETCD_ENV names; std::nullopt (and *error) when unset/unreadable.
    static std::optional<EtcdEnv> fromEnvironment(QString *error = nullptr);
    static std::optional<EtcdEnv> fromFile(const QString &path, QString *error = nullptr);
};

// A private etcd in a temporary directory, run through etcd-cluster.sh ($RT_ETCD_SCRIPT), for
// tests that take etcd away and bring it back. The script runs as a child process while the
// caller's event loop keeps running (QTest::qWaitFor), so backends under test keep working.
// The destructor stops the server and removes the directory.
class ScratchEtcd
{
public:
    ScratchEtcd();
    ~ScratchEtcd();
    ScratchEtcd(const ScratchEtcd &) = delete;
    ScratchEtcd &operator=(const ScratchEtcd &) = delete;

    bool start(QString *error = nullptr);
    bool halt(QString *error = nullptr); // the server stops; data and ports are kept
    bool resume(QString *error = nullptr); // same ports and data
    QString endpoints() const { return m_env ? m_env->endpoints : QString(); }

private:
    bool run(const QString &action, QString *error);

    QTemporaryDir m_dir;
    std::optional<EtcdEnv> m_env;
};

} // namespace rt::testsupport
