#pragma once

#include "shared/core/result.h"

#include <QByteArrayView>
#include <QString>

namespace rt::tenants {

// Files only this user may read: the embedded control plane's data directory (0700), its SQLite
// database (0600) and the generated secrets key (0600). Modes are set at creation, never
// after it (no window in which the umask's mode applies), and an existing path with a wider
// mode is tightened and logged. Plain POSIX calls; safe from any thread.

// Creates `path` (and missing parents) as a directory with mode 0700, or tightens it to 0700.
Result<bool> ensurePrivateDirectory(const QString &path);

// Creates `path` with mode 0600 if it does not exist, or tightens it to 0600; never truncates.
Result<bool> ensurePrivateFile(const QString &path);

// Creates `path` exclusively (O_EXCL: fails if anything, even a dangling link, is there) with
// mode 0600 and writes `content` to it completely (fsync'ed before it returns).
Result<bool> createPrivateFile(const QString &path, QByteArrayView content);

} // namespace rt::tenants
