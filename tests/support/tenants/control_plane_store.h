#pragma once

#include "server/tenants/control_plane.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

// The control plane's two backends (embedded SQLite, PostgreSQL) as interchangeable fixtures of
// one conformance suite. Each store is fresh and empty when made; raw SQL reaches its tables
// behind the control plane's back, with the table names written as {tenants}, {extensions},
// {migrations} and {settings}. Test code only; used on the thread that makes it.
namespace rt::testsupport {

class ControlPlaneStore
{
public:
    enum class Kind { Sqlite, Postgres };

    // A fresh store of `kind`; nullptr and *error when it cannot be made (for PostgreSQL: the
    // RT_PG_ENV fixture is missing or the scratch database cannot be created).
    static std::unique_ptr<ControlPlaneStore> create(Kind kind, QString *error);
    static std::optional<Kind> kindNamed(const QString &name); // "sqlite" | "postgres"

    virtual ~ControlPlaneStore() = default;
    ControlPlaneStore(const ControlPlaneStore &) = delete;
    ControlPlaneStore &operator=(const ControlPlaneStore &) = delete;

    virtual Kind kind() const = 0;
    // Settings of a control plane on this store whose DB_ENC_KEY is `key`.
    virtual tenants::ControlPlaneSettings settings(const QByteArray &key) const = 0;
    // Runs one statement; false (and lastError()) on failure.
    virtual bool exec(const QString &sql) = 0;
    // The first column of every row as text; {"<error: ...>"} on failure, so that a QCOMPARE
    // shows the error.
    virtual QStringList column(const QString &sql) = 0;
    virtual QString lastError() const = 0;

protected:
    ControlPlaneStore() = default;
    // `sql` with the {table} placeholders replaced by this backend's table names.
    QString withTables(QString sql) const;
};

} // namespace rt::testsupport
