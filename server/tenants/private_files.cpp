#include "server/tenants/private_files.h"

#include "server/tenants/logging.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rt::tenants {

namespace {

constexpr mode_t PrivateDirectoryMode = 0700;
constexpr mode_t PrivateFileMode = 0600;

QString lastError()
{
    return qt_error_string(errno);
}

// Removes group and other bits from an existing path (after creation or on a later start).
Result<bool> tighten(const QByteArray &native, const QString &path, mode_t wanted)
{
    struct stat info = {};
    if (::stat(native.constData(), &info) != 0) {
        return Error{ QStringLiteral("cannot read the mode of %1: %2").arg(path, lastError()) };
    }
    if ((info.st_mode & 0077) == 0) {
        return true;
    }
    if (::chmod(native.constData(), wanted) != 0) {
        return Error{ QStringLiteral("cannot restrict %1 to mode %2: %3")
                              .arg(path, QString::number(wanted, 8), lastError()) };
    }
    qCWarning(lcTenants).nospace()
            << path << " was readable by others (mode " << QString::number(info.st_mode & 0777, 8)
            << "); restricted to " << QString::number(wanted, 8);
    return true;
}

} // namespace

Result<bool> ensurePrivateDirectory(const QString &path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    const QString parent = QFileInfo(absolute).absolutePath();
    if (!QDir().mkpath(parent)) {
        return Error{ QStringLiteral("cannot create the data directory %1").arg(absolute) };
    }
    const QByteArray native = QFile::encodeName(absolute);
    if (::mkdir(native.constData(), PrivateDirectoryMode) != 0 && errno != EEXIST) {
        return Error{
            QStringLiteral("cannot create the data directory %1: %2").arg(absolute, lastError())
        };
    }
    if (!QFileInfo(absolute).isDir()) {
        return Error{
            QStringLiteral("cannot create the data directory %1: not a directory").arg(absolute)
        };
    }
    return tighten(native, absolute, PrivateDirectoryMode);
}

Result<bool> ensurePrivateFile(const QString &path)
{
    const QByteArray native = QFile::encodeName(path);
    const int fd = ::open(native.constData(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                          PrivateFileMode);
    if (fd >= 0) {
        ::close(fd);
        return true;
    }
    if (errno != EEXIST) {
        return Error{ QStringLiteral("cannot create %1: %2").arg(path, lastError()) };
    }
    struct stat info = {};
    if (::stat(native.constData(), &info) != 0 || !S_ISREG(info.st_mode)) {
        return true; // not a file: whoever opens it reports what it is
    }
    return tighten(native, path, PrivateFileMode);
}

Result<bool> createPrivateFile(const QString &path, QByteArrayView content)
{
    const QByteArray native = QFile::encodeName(path);
    const int fd = ::open(native.constData(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                          PrivateFileMode);
    if (fd < 0) {
        return Error{ QStringLiteral("cannot create %1: %2").arg(path, lastError()) };
    }
    qsizetype done = 0;
    while (done < content.size()) {
        const ssize_t wrote =
                ::write(fd, content.data() + done, static_cast<size_t>(content.size() - done));
        if (wrote < 0 && errno == EINTR) {
            continue;
        }
        if (wrote <= 0) {
            const QString reason = lastError();
            ::close(fd);
            ::unlink(native.constData());
            return Error{ QStringLiteral("cannot write %1: %2").arg(path, reason) };
        }
        done += wrote;
    }
    const bool synced = ::fsync(fd) == 0;
    const QString reason = synced ? QString() : lastError();
    if (::close(fd) != 0 || !synced) {
        ::unlink(native.constData());
        return Error{ QStringLiteral("cannot write %1: %2").arg(path, reason) };
    }
    return true;
}

} // namespace rt::tenants
