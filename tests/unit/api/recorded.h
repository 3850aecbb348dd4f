#pragma once

#include <QByteArray>
#include <QFile>
#include <QString>

// The admin API's recorded answers in data/ (RT_API_TEST_DATA, set by CMakeLists.txt), read
// whole; a missing file stops the test at once.
inline QByteArray recorded(const char *name)
{
    QFile file(QStringLiteral(RT_API_TEST_DATA "/") + QLatin1String(name));
    if (!file.open(QIODevice::ReadOnly)) {
        qFatal("cannot read %s", name);
    }
    return file.readAll();
}
