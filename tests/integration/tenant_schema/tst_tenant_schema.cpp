// The tenant-database schema `realtime` (resources/sql/tenant/NNNN_<name>.sql) on a real
// PostgreSQL 15 (the CTest fixture "postgres", pg-cluster.sh).
//
// The migrations are applied as the migration runner applies them: every file in version order,
// each as one multi-statement simple-protocol query (one implicit transaction). They are applied
// as the non-superuser `realtime` role (owns the database, no CREATEROLE) and as the superuser,
// each time twice (idempotent), and on top of an older schema made the way Supabase's own server
// left it. Then the objects are exercised: the subscription check trigger and its error texts,
// realtime.send / send_binary / broadcast_changes / topic, the daily partitions of
// realtime.messages, an RLS policy evaluated as `authenticated`, and the publications.
// Every test case gets a fresh database (ScratchDatabase), dropped when it ends.
#include "tests/support/postgres/pg_env.h"

#include <QDate>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>
#include <QTimeZone>
#include <QUuid>

#include <libpq-fe.h>

#include <iterator>
#include <memory>
#include <optional>

using rt::testsupport::PgEnv;
using rt::testsupport::PgSession;
using rt::testsupport::ScratchDatabase;

namespace {

constexpr char kSqlDirVariable[] = "RT_TENANT_SQL_DIR";

// An older realtime schema, as a Supabase server of early 2025 left it (before the PostgREST
// filter operators, `negate`, action_filter, selected_columns, binary_payload and
// publish_via_partition_root), owned by supabase_realtime_admin, with one stored subscription.
// Outside the test class: moc mis-parses raw string literals inside it.
const char *const kLegacySchema = R"sql(
DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'supabase_realtime_admin') THEN
        CREATE ROLE supabase_realtime_admin NOLOGIN NOINHERIT;
    END IF;
END $$;
CREATE SCHEMA realtime;
GRANT USAGE, CREATE ON SCHEMA realtime TO supabase_realtime_admin;
CREATE TABLE realtime.schema_migrations (version bigint PRIMARY KEY, inserted_at timestamp(0));
CREATE TYPE realtime.equality_op AS ENUM ('eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'in');
CREATE TYPE realtime.action AS ENUM ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'ERROR');
CREATE TYPE realtime.user_defined_filter AS (column_name text, op realtime.equality_op, value text);
CREATE TYPE realtime.wal_column AS (name text, type_name text, type_oid oid, value jsonb,
                                    is_pkey boolean, is_selectable boolean);
CREATE TYPE realtime.wal_rls AS (wal jsonb, is_rls_enabled boolean, subscription_ids uuid[], errors text[]);
CREATE FUNCTION realtime.to_regrole(role_name text) RETURNS regrole LANGUAGE sql IMMUTABLE
    AS 'select role_name::regrole';
CREATE TABLE realtime.subscription (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subscription_id uuid NOT NULL,
    entity regclass NOT NULL,
    filters realtime.user_defined_filter[] NOT NULL DEFAULT '{}',
    claims jsonb NOT NULL,
    claims_role regrole NOT NULL GENERATED ALWAYS AS (realtime.to_regrole(claims ->> 'role')) STORED,
    created_at timestamp NOT NULL DEFAULT timezone('utc', now()));
CREATE UNIQUE INDEX subscription_subscription_id_entity_filters_key
    ON realtime.subscription (subscription_id, entity, filters);
INSERT INTO realtime.subscription (subscription_id, entity, filters, claims)
    VALUES ('11111111-1111-1111-1111-111111111111', 'pg_catalog.pg_class',
            ARRAY[('relname', 'eq', 'x')]::realtime.user_defined_filter[], '{"role": "anon"}');
CREATE TABLE realtime.messages (
    topic text NOT NULL, extension text NOT NULL, payload jsonb, event text,
    private boolean DEFAULT false,
    updated_at timestamp NOT NULL DEFAULT now(), inserted_at timestamp NOT NULL DEFAULT now(),
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    PRIMARY KEY (id, inserted_at)) PARTITION BY RANGE (inserted_at);
ALTER TABLE realtime.messages ENABLE ROW LEVEL SECURITY;
-- Unaligned bounds, as the first partitioned version of realtime.send made them.
CREATE TABLE realtime.messages_unaligned PARTITION OF realtime.messages FOR VALUES
    FROM (timezone('utc', now()) - interval '1 hour') TO (timezone('utc', now()) + interval '23 hours');
CREATE FUNCTION realtime.send(payload jsonb, event text, topic text, private boolean DEFAULT true)
RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
    INSERT INTO realtime.messages (payload, event, topic, private, extension)
    VALUES (payload, event, topic, private, 'broadcast');
END $f$;
CREATE FUNCTION realtime.topic() RETURNS text LANGUAGE sql STABLE
    AS $f$ select nullif(current_setting('realtime.topic', true), '')::text $f$;
CREATE PUBLICATION supabase_realtime_messages_publication FOR TABLE realtime.messages;
ALTER TABLE realtime.messages OWNER TO supabase_realtime_admin;
ALTER TABLE realtime.messages_unaligned OWNER TO supabase_realtime_admin;
ALTER TABLE realtime.subscription OWNER TO supabase_realtime_admin;
ALTER TYPE realtime.equality_op OWNER TO supabase_realtime_admin;
ALTER TYPE realtime.user_defined_filter OWNER TO supabase_realtime_admin;
ALTER FUNCTION realtime.send(jsonb, text, text, boolean) OWNER TO supabase_realtime_admin;
ALTER FUNCTION realtime.to_regrole(text) OWNER TO supabase_realtime_admin;
ALTER FUNCTION realtime.topic() OWNER TO supabase_realtime_admin;
)sql";

// A table to subscribe to: `authenticated` may read every column but `secret`.
const char *const kTodosTable = R"sql(
CREATE TABLE public.todos (
    id integer PRIMARY KEY,
    title text,
    done boolean,
    secret text,
    code varchar(10),
    blob bytea,
    at timestamptz);
GRANT SELECT (id, title, done, code, blob, at) ON public.todos TO authenticated;
GRANT SELECT ON public.todos TO service_role;
)sql";

// A table whose row trigger broadcasts every change to the topic 'todo:<id>'.
const char *const kBroadcastTrigger = R"sql(
CREATE TABLE public.notes (id integer PRIMARY KEY, body text);
CREATE FUNCTION public.notes_broadcast() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM realtime.broadcast_changes('note:' || coalesce(NEW.id, OLD.id)::text, TG_OP, TG_OP,
                                       TG_TABLE_NAME, TG_TABLE_SCHEMA, NEW, OLD, TG_LEVEL);
    RETURN NULL;
END $f$;
CREATE TRIGGER notes_broadcast AFTER INSERT OR UPDATE OR DELETE ON public.notes
    FOR EACH ROW EXECUTE FUNCTION public.notes_broadcast();
)sql";

// Private-channel policies in the style of Supabase's docs (spec §7.5).
const char *const kPolicies = R"sql(
CREATE POLICY "authenticated receive on topic" ON realtime.messages FOR SELECT TO authenticated
    USING (realtime.topic() LIKE 'topic:%'
           AND (current_setting('request.jwt.claims', true)::jsonb ->> 'sub') = 'user-1');
CREATE POLICY "authenticated broadcast on topic" ON realtime.messages FOR INSERT TO authenticated
    WITH CHECK (realtime.topic() LIKE 'topic:%');
)sql";

QString sql(const char *text)
{
    return QString::fromUtf8(text);
}

// The files the runner applies: NNNN_<name>.sql, in version order.
QStringList migrationFiles(QString *error)
{
    const QString dir = qEnvironmentVariable(kSqlDirVariable);
    if (dir.isEmpty()) {
        *error = QStringLiteral("%1 is not set").arg(QLatin1String(kSqlDirVariable));
        return {};
    }
    static const QRegularExpression name(QStringLiteral("^[0-9]{4}_[a-z0-9_]+\\.sql$"));
    QStringList files;
    const QStringList entries =
            QDir(dir).entryList({ QStringLiteral("*.sql") }, QDir::Files, QDir::Name);
    for (const QString &entry : entries) {
        if (name.match(entry).hasMatch()) {
            files.append(QDir(dir).filePath(entry));
        }
    }
    if (files.isEmpty()) {
        *error = QStringLiteral("no NNNN_<name>.sql file in %1").arg(dir);
    }
    return files;
}

// Collects the NOTICE/WARNING texts libpq hands to the notice processor (one line each).
void collectNotice(void *notices, const char *message)
{
    static_cast<QStringList *>(notices)->append(QString::fromUtf8(message).trimmed());
}

// A libpq connection that runs scripts as one simple-protocol query each (PQexec), as the
// migration runner does: several statements and $$-quoted bodies in one string, run as one
// implicit transaction (unless the script has BEGIN/COMMIT), the first error reported. Not QtSql:
// Qt 6.4's QPSQL reads only the first statement's result of a multi-statement query and discards
// the rest, so an error in a later statement would go unnoticed. Synchronous: test set-up only.
class ScriptConnection
{
public:
    ScriptConnection(const PgEnv &env, const QString &database, PgSession::Role role)
    {
        const bool super = role == PgSession::Role::Super;
        const QByteArray values[] = {
            env.host.toUtf8(),
            QByteArray::number(env.port),
            database.toUtf8(),
            (super ? env.superUser : env.user).toUtf8(),
            (super ? env.superPassword : env.password).toUtf8(),
            QByteArrayLiteral("10"),
            QByteArrayLiteral("rt-test-tenant-schema"),
        };
        const char *const keywords[] = {
            "host", "port", "dbname", "user", "password", "connect_timeout", "application_name",
            nullptr
        };
        const char *valuePointers[std::size(values) + 1] = {};
        for (std::size_t i = 0; i < std::size(values); ++i) {
            valuePointers[i] = values[i].constData();
        }
        m_connection = PQconnectdbParams(keywords, valuePointers, 0);
        if (PQstatus(m_connection) != CONNECTION_OK) {
            m_error = QStringLiteral("cannot connect: ")
                    + QString::fromUtf8(PQerrorMessage(m_connection)).simplified();
        } else {
            PQsetNoticeProcessor(m_connection, collectNotice, &m_notices);
        }
    }
    ~ScriptConnection() { PQfinish(m_connection); }
    ScriptConnection(const ScriptConnection &) = delete;
    ScriptConnection &operator=(const ScriptConnection &) = delete;

    // Runs the script; returns the error, empty on success. *notices (if given) receives the
    // NOTICEs and WARNINGs it raised.
    QString run(const QString &script, QStringList *notices = nullptr)
    {
        if (!m_error.isEmpty()) {
            return m_error;
        }
        m_notices.clear();
        PGresult *result = PQexec(m_connection, script.toUtf8().constData());
        QString error;
        switch (PQresultStatus(result)) {
        case PGRES_COMMAND_OK:
        case PGRES_TUPLES_OK:
        case PGRES_EMPTY_QUERY:
            break;
        default:
            error = QString::fromUtf8(PQresultErrorMessage(result)).simplified();
            if (error.isEmpty()) {
                error = QString::fromUtf8(PQerrorMessage(m_connection)).simplified();
            }
            break;
        }
        PQclear(result);
        if (notices) {
            *notices = m_notices;
        }
        return error;
    }

private:
    PGconn *m_connection = nullptr;
    QString m_error;
    QStringList m_notices;
};

// One script on a connection of its own; returns the error, empty on success.
QString runScript(const PgEnv &env, const QString &database, PgSession::Role role,
                  const QString &script, QStringList *notices = nullptr)
{
    ScriptConnection connection(env, database, role);
    return connection.run(script, notices);
}

// Applies every migration file in version order on one connection, each file as one query (one
// implicit transaction, as the runner's per-file transaction). Returns the error, empty on
// success; *notices (if given) receives the NOTICEs of all files.
QString applyMigrations(const PgEnv &env, const QString &database, PgSession::Role role,
                        QStringList *notices = nullptr)
{
    QString error;
    const QStringList files = migrationFiles(&error);
    if (files.isEmpty()) {
        return error;
    }
    ScriptConnection connection(env, database, role);
    for (const QString &path : files) {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            return QStringLiteral("cannot read %1").arg(path);
        }
        QStringList fileNotices;
        error = connection.run(QString::fromUtf8(file.readAll()), &fileNotices);
        if (notices) {
            notices->append(fileNotices);
        }
        if (!error.isEmpty()) {
            return QStringLiteral("%1: %2").arg(QFileInfo(path).fileName(), error);
        }
    }
    return {};
}

#define RUN_SCRIPT(database, role, script)                                \
  do {                                                                    \
    const QString scriptError = runScript(m_env, database, role, script); \
    QVERIFY2(scriptError.isEmpty(), qPrintable(scriptError));             \
  } while (false)

QJsonObject jsonObject(const QVariant &value)
{
    return QJsonDocument::fromJson(value.toString().toUtf8()).object();
}

QString todayPartition()
{
    return QStringLiteral("messages_")
            + QDateTime::currentDateTimeUtc().date().toString(QStringLiteral("yyyy_MM_dd"));
}

} // namespace

class TenantSchemaTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void appliesAsRealtimeRoleTwice();
    void appliesAsSuperuserTwice();
    void appliesOnTopOfOlderSupabaseSchema();

    void catalogShape();
    void subscriptionInsertSetsRoleAndNormalises();
    void subscriptionUpsertOnUniqueIndex();
    void subscriptionValidation_data();
    void subscriptionValidation();

    void sendAddsIdAndTopic();
    void sendBinaryStoresBytes();
    void sendSwallowsErrorsAsWarnings();
    void broadcastChangesFromRowTrigger();
    void broadcastChangesRefusesStatementLevel();
    void topicFunction();

    void partitions();
    void rlsPolicyAsAuthenticated();
    void publications();
    void filterHelpers();

private:
    // A fresh database with the migrations applied (twice) as `role`; nullptr after a failure
    // (already reported with QFAIL-like messages through *error).
    std::unique_ptr<ScratchDatabase> migratedDatabase(PgSession::Role role, QString *error);

    PgEnv m_env;
    std::unique_ptr<ScratchDatabase> m_validationDb; // shared by subscriptionValidation's rows
};

std::unique_ptr<ScratchDatabase> TenantSchemaTest::migratedDatabase(PgSession::Role role,
                                                                    QString *error)
{
    auto db = std::make_unique<ScratchDatabase>(m_env, QStringLiteral("rt_tenant_schema"));
    if (!db->isValid()) {
        *error = db->error();
        return nullptr;
    }
    for (int round = 1; round <= 2; ++round) {
        const QString applyError = applyMigrations(m_env, db->name(), role);
        if (!applyError.isEmpty()) {
            *error = QStringLiteral("round %1: %2").arg(round).arg(applyError);
            return nullptr;
        }
    }
    return db;
}

#define MIGRATED_DB(var, role)                                                      \
  QString var##Error;                                                               \
  const std::unique_ptr<ScratchDatabase> var = migratedDatabase(role, &var##Error); \
  QVERIFY2(var, qPrintable(var##Error))

void TenantSchemaTest::initTestCase()
{
    QString error;
    const std::optional<PgEnv> env = PgEnv::fromEnvironment(&error);
    QVERIFY2(env, qPrintable(error));
    m_env = *env;
    const QStringList files = migrationFiles(&error);
    QVERIFY2(files.size() >= 6, qPrintable(error));

    // runScript relies on a script failing as a whole when a later statement fails.
    ScratchDatabase db(m_env);
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    QVERIFY(runScript(m_env, db.name(), PgSession::Role::Realtime,
                      QStringLiteral("CREATE TABLE probe (id int); SELECT 1/0"))
                    .contains(QStringLiteral("division by zero")));
    PgSession session(m_env, db.name(), PgSession::Role::Realtime);
    QCOMPARE(session.scalar(QStringLiteral("SELECT to_regclass('probe') IS NULL")).toBool(), true);
}

void TenantSchemaTest::cleanupTestCase()
{
    m_validationDb.reset();
}

void TenantSchemaTest::appliesAsRealtimeRoleTwice()
{
    PgSession super(m_env, QStringLiteral("postgres"));
    QVERIFY2(super.isOpen(), qPrintable(super.lastError()));
    const bool adminRoleExisted =
            super.scalar(QStringLiteral("SELECT count(*) FROM pg_roles WHERE rolname = "
                                        "'supabase_realtime_admin'"))
                    .toInt()
            == 1;

    ScratchDatabase scratch(m_env, QStringLiteral("rt_tenant_schema"));
    QVERIFY2(scratch.isValid(), qPrintable(scratch.error()));
    const ScratchDatabase *const db = &scratch;
    QStringList notices;
    for (int round = 1; round <= 2; ++round) {
        const QString error =
                applyMigrations(m_env, db->name(), PgSession::Role::Realtime, &notices);
        QVERIFY2(error.isEmpty(), qPrintable(QStringLiteral("round %1: %2").arg(round).arg(error)));
    }
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);
    QVERIFY2(session.isOpen(), qPrintable(session.lastError()));

    // No CREATEROLE: the missing owner role is skipped with a NOTICE, not an error.
    if (!adminRoleExisted) {
        QCOMPARE(super.scalar(QStringLiteral("SELECT count(*) FROM pg_roles WHERE rolname = "
                                             "'supabase_realtime_admin'"))
                         .toInt(),
                 0);
        QVERIFY2(notices.contains(
                         QStringLiteral("NOTICE:  role supabase_realtime_admin is missing and "
                                        "realtime may not create it; skipped")),
                 qPrintable(notices.join(u'\n')));
    }
    // The realtime role is no member of supabase_realtime_admin: it keeps owning what it made.
    QCOMPARE(session.column(QStringLiteral(
                     "SELECT DISTINCT relowner::regrole::text FROM pg_class "
                     "WHERE relnamespace = 'realtime'::regnamespace AND relkind IN ('r', 'p')")),
             QStringList{ QStringLiteral("realtime") });
    QCOMPARE(session.scalar(QStringLiteral("SELECT nspowner::regrole::text FROM pg_namespace WHERE "
                                           "nspname = 'realtime'"))
                     .toString(),
             QStringLiteral("realtime"));
    for (const QString &role : { QStringLiteral("anon"), QStringLiteral("authenticated"),
                                 QStringLiteral("service_role") }) {
        QVERIFY2(session.scalar(QStringLiteral(
                                        "SELECT has_schema_privilege(?, 'realtime', 'USAGE')"),
                                { role })
                         .toBool(),
                 qPrintable(role));
        QVERIFY2(session.scalar(QStringLiteral("SELECT has_table_privilege(?, 'realtime.messages', "
                                               "'INSERT, SELECT, UPDATE')"),
                                { role })
                         .toBool(),
                 qPrintable(role));
        QVERIFY2(session.scalar(QStringLiteral("SELECT has_table_privilege(?, "
                                               "'realtime.subscription', 'SELECT')"),
                                { role })
                         .toBool(),
                 qPrintable(role));
    }
    QCOMPARE(session.scalar(QStringLiteral("SELECT count(*) FROM pg_class WHERE relnamespace = "
                                           "'realtime'::regnamespace "
                                           "AND relname = ?"),
                            { todayPartition() })
                     .toInt(),
             1);
}

void TenantSchemaTest::appliesAsSuperuserTwice()
{
    MIGRATED_DB(db, PgSession::Role::Super);
    PgSession session(m_env, db->name());
    QVERIFY2(session.isOpen(), qPrintable(session.lastError()));

    QCOMPARE(session.scalar(QStringLiteral(
                                    "SELECT rolinherit::text || rolcanlogin::text FROM pg_roles "
                                    "WHERE rolname = 'supabase_realtime_admin'"))
                     .toString(),
             QStringLiteral("falsefalse"));
    QCOMPARE(session
                     .scalar(QStringLiteral(
                             "SELECT rolbypassrls FROM pg_roles WHERE rolname = 'service_role'"))
                     .toBool(),
             true);
    // Everything ours is owned by supabase_realtime_admin, as in Supabase's schema.
    QCOMPARE(session.column(QStringLiteral(
                     "SELECT DISTINCT relowner::regrole::text FROM pg_class "
                     "WHERE relnamespace = 'realtime'::regnamespace AND relkind IN ('r', 'p')")),
             QStringList{ QStringLiteral("supabase_realtime_admin") });
    QCOMPARE(session.column(QStringLiteral("SELECT DISTINCT typowner::regrole::text FROM pg_type "
                                           "WHERE typnamespace = 'realtime'::regnamespace "
                                           "AND typname IN ('equality_op', 'action', "
                                           "'user_defined_filter', 'wal_column', 'wal_rls')")),
             QStringList{ QStringLiteral("supabase_realtime_admin") });
    QCOMPARE(session.column(QStringLiteral("SELECT DISTINCT proowner::regrole::text FROM pg_proc "
                                           "WHERE pronamespace = 'realtime'::regnamespace")),
             QStringList{ QStringLiteral("supabase_realtime_admin") });
    QVERIFY(session.scalar(QStringLiteral("SELECT has_schema_privilege('supabase_realtime_admin', "
                                          "'realtime', 'CREATE')"))
                    .toBool());

    // And it works for the server's (non-superuser) role too.
    PgSession realtime(m_env, db->name(), PgSession::Role::Realtime);
    QVERIFY2(realtime.exec(QStringLiteral("BEGIN")), qPrintable(realtime.lastError()));
    QVERIFY2(realtime.exec(QStringLiteral("SET LOCAL ROLE service_role")),
             qPrintable(realtime.lastError()));
    QVERIFY2(realtime.exec(QStringLiteral("SELECT realtime.send('{}', 'e', 'room', true)")),
             qPrintable(realtime.lastError()));
    QCOMPARE(realtime.scalar(QStringLiteral(
                                     "SELECT count(*) FROM realtime.messages WHERE topic = 'room'"))
                     .toInt(),
             1);
    QVERIFY(realtime.exec(QStringLiteral("ROLLBACK")));
}

void TenantSchemaTest::appliesOnTopOfOlderSupabaseSchema()
{
    ScratchDatabase db(m_env, QStringLiteral("rt_tenant_legacy"));
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    PgSession session(m_env, db.name());
    QVERIFY2(session.isOpen(), qPrintable(session.lastError()));
    RUN_SCRIPT(db.name(), PgSession::Role::Super, sql(kLegacySchema));
    for (int round = 1; round <= 2; ++round) {
        const QString error = applyMigrations(m_env, db.name(), PgSession::Role::Super);
        QVERIFY2(error.isEmpty(), qPrintable(QStringLiteral("round %1: %2").arg(round).arg(error)));
    }

    QCOMPARE(session.scalar(QStringLiteral("SELECT enum_range(NULL::realtime.equality_op)::text"))
                     .toString(),
             QStringLiteral("{eq,neq,lt,lte,gt,gte,in,like,ilike,is,match,imatch,isdistinct}"));
    QCOMPARE(session
                     .scalar(QStringLiteral(
                             "SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute "
                             "WHERE attrelid = (SELECT typrelid FROM pg_type WHERE oid = "
                             "'realtime.user_defined_filter'::regtype) AND NOT attisdropped"))
                     .toString(),
             QStringLiteral("column_name,op,value,negate"));
    // The stored subscription survived and reads with negate NULL.
    QCOMPARE(session.scalar(QStringLiteral("SELECT filters::text FROM realtime.subscription"))
                     .toString(),
             QStringLiteral("{\"(relname,eq,x,)\"}"));
    QCOMPARE(session.scalar(QStringLiteral("SELECT action_filter FROM realtime.subscription"))
                     .toString(),
             QStringLiteral("*"));
    // New operators and selected columns work on the upgraded table.
    QVERIFY2(session.exec(QStringLiteral(
                     "INSERT INTO realtime.subscription (subscription_id, entity, filters, claims, "
                     "selected_columns) "
                     "VALUES (gen_random_uuid(), 'pg_catalog.pg_class', "
                     "ARRAY[('relname', 'ilike', 'pg%', true)]::realtime.user_defined_filter[], "
                     "'{\"role\": \"authenticated\"}', '{relname}')")),
             qPrintable(session.lastError()));
    // messages gained binary_payload; realtime.send (replaced) works; the publication now
    // publishes through the root.
    QVERIFY2(session.exec(
                     QStringLiteral("SELECT realtime.send_binary('\\x01'::bytea, 'e', 'legacy')")),
             qPrintable(session.lastError()));
    QVERIFY2(session.exec(QStringLiteral("SELECT realtime.send('{\"a\": 1}', 'e', 'legacy')")),
             qPrintable(session.lastError()));
    QCOMPARE(
            session.scalar(QStringLiteral(
                                   "SELECT count(*) FROM realtime.messages WHERE topic = 'legacy'"))
                    .toInt(),
            2);
    QCOMPARE(session.scalar(QStringLiteral(
                                    "SELECT pubviaroot FROM pg_publication "
                                    "WHERE pubname = 'supabase_realtime_messages_publication'"))
                     .toBool(),
             true);
    // Its objects stay with supabase_realtime_admin, and ours joined them.
    QCOMPARE(session.column(QStringLiteral(
                     "SELECT DISTINCT relowner::regrole::text FROM pg_class WHERE relnamespace = "
                     "'realtime'::regnamespace "
                     "AND relkind IN ('r', 'p') AND relname <> 'schema_migrations'")),
             QStringList{ QStringLiteral("supabase_realtime_admin") });
    // The unaligned old partition stays; days it covers were skipped, others created.
    QCOMPARE(
            session.scalar(QStringLiteral("SELECT count(*) FROM pg_inherits WHERE inhparent = "
                                          "'realtime.messages'::regclass "
                                          "AND inhrelid = 'realtime.messages_unaligned'::regclass"))
                    .toInt(),
            1);
    const QString inThreeDays = QStringLiteral("messages_")
            + QDateTime::currentDateTimeUtc().date().addDays(3).toString(
                    QStringLiteral("yyyy_MM_dd"));
    QVERIFY(!session.scalar(QStringLiteral("SELECT to_regclass('realtime.' || ?) IS NULL"),
                            { inThreeDays })
                     .toBool());
}

void TenantSchemaTest::catalogShape()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);
    // The realtime role's default search_path ("$user", public) would show realtime's types
    // unqualified.
    QVERIFY(session.exec(QStringLiteral("SET search_path = public")));

    const QString columns = QStringLiteral(
            "SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod) "
            "|| CASE WHEN attnotnull THEN ' not null' ELSE '' END, ', ' ORDER BY attnum) "
            "FROM pg_attribute WHERE attrelid = ?::regclass AND attnum > 0 AND NOT attisdropped");
    QCOMPARE(session.scalar(columns, { QStringLiteral("realtime.subscription") }).toString(),
             QStringLiteral(
                     "id bigint not null, subscription_id uuid not null, entity regclass not null, "
                     "filters realtime.user_defined_filter[] not null, claims jsonb not null, "
                     "claims_role regrole not null, created_at timestamp without time zone not "
                     "null, "
                     "action_filter text, selected_columns text[]"));
    QCOMPARE(session.scalar(columns, { QStringLiteral("realtime.messages") }).toString(),
             QStringLiteral(
                     "topic text not null, extension text not null, payload jsonb, event text, "
                     "private boolean, updated_at timestamp without time zone not null, "
                     "inserted_at timestamp without time zone not null, id uuid not null, "
                     "binary_payload bytea, skip_broadcast boolean not null, "
                     "expires_at timestamp without time zone, insertion_order bigint"));
    const QString typeColumns =
            QStringLiteral("SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), "
                           "', ' ORDER BY attnum) "
                           "FROM pg_attribute WHERE attrelid = (SELECT typrelid FROM pg_type WHERE "
                           "oid = ?::regtype)");
    QCOMPARE(session.scalar(typeColumns, { QStringLiteral("realtime.user_defined_filter") })
                     .toString(),
             QStringLiteral(
                     "column_name text, op realtime.equality_op, value text, negate boolean"));
    QCOMPARE(session.scalar(typeColumns, { QStringLiteral("realtime.wal_column") }).toString(),
             QStringLiteral("name text, type_name text, type_oid oid, value jsonb, is_pkey "
                            "boolean, is_selectable boolean"));
    QCOMPARE(session.scalar(typeColumns, { QStringLiteral("realtime.wal_rls") }).toString(),
             QStringLiteral(
                     "wal jsonb, is_rls_enabled boolean, subscription_ids uuid[], errors text[]"));
    QCOMPARE(session.scalar(QStringLiteral("SELECT enum_range(NULL::realtime.equality_op)::text"))
                     .toString(),
             QStringLiteral("{eq,neq,lt,lte,gt,gte,in,like,ilike,is,match,imatch,isdistinct}"));
    QCOMPARE(session.scalar(QStringLiteral("SELECT enum_range(NULL::realtime.action)::text"))
                     .toString(),
             QStringLiteral("{INSERT,UPDATE,DELETE,TRUNCATE,ERROR}"));

    // claims_role is generated from the claims; the table is partitioned by inserted_at.
    QCOMPARE(session.scalar(QStringLiteral(
                                    "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef "
                                    "WHERE adrelid = 'realtime.subscription'::regclass AND adnum = "
                                    "(SELECT attnum FROM pg_attribute WHERE attrelid = adrelid AND "
                                    "attname = 'claims_role')"))
                     .toString(),
             QStringLiteral("realtime.to_regrole((claims ->> 'role'::text))"));
    QCOMPARE(session.scalar(QStringLiteral(
                                    "SELECT pg_get_partkeydef('realtime.messages'::regclass)"))
                     .toString(),
             QStringLiteral("RANGE (inserted_at)"));
    QCOMPARE(session.scalar(QStringLiteral("SELECT relrowsecurity FROM pg_class WHERE oid = "
                                           "'realtime.messages'::regclass"))
                     .toBool(),
             true);
    QCOMPARE(session
                     .scalar(QStringLiteral(
                             "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                             "WHERE conrelid = 'realtime.messages'::regclass AND contype = 'p'"))
                     .toString(),
             QStringLiteral("PRIMARY KEY (id, inserted_at)"));
    QCOMPARE(session.scalar(QStringLiteral("SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                                           "WHERE conrelid = 'realtime.messages'::regclass AND "
                                           "conname = 'messages_payload_exclusive'"))
                     .toString(),
             QStringLiteral("CHECK (((payload IS NULL) OR (binary_payload IS NULL)))"));
    QCOMPARE(session.scalar(QStringLiteral(
                                    "SELECT split_part(indexdef, ' USING ', 2) FROM pg_indexes "
                                    "WHERE schemaname = 'realtime' AND indexname = "
                                    "'messages_inserted_at_topic_index'"))
                     .toString(),
             QStringLiteral("btree (inserted_at DESC, topic) WHERE ((extension = "
                            "'broadcast'::text) AND (private IS TRUE))"));
    QCOMPARE(session.scalar(QStringLiteral(
                                    "SELECT count(*) FROM pg_index i WHERE i.indrelid = "
                                    "'realtime.subscription'::regclass "
                                    "AND i.indisunique AND "
                                    "split_part(pg_get_indexdef(i.indexrelid), ' USING ', 2) = "
                                    "'btree (subscription_id, entity, filters, action_filter, "
                                    "COALESCE(selected_columns, ''{}''::text[]))'"))
                     .toInt(),
             1);
    QCOMPARE(session.scalar(QStringLiteral(
                                    "SELECT tgname || ' ' || tgfoid::regproc::text FROM pg_trigger "
                                    "WHERE tgrelid = 'realtime.subscription'::regclass AND NOT "
                                    "tgisinternal"))
                     .toString(),
             QStringLiteral("tr_check_filters realtime.subscription_check_filters"));

    const QStringList functions = {
        QStringLiteral("realtime.topic()"),
        QStringLiteral("realtime.to_regrole(text)"),
        QStringLiteral("realtime.subscription_check_filters()"),
        QStringLiteral("realtime.send(jsonb, text, text, boolean)"),
        QStringLiteral("realtime.send_binary(bytea, text, text, boolean)"),
        QStringLiteral(
                "realtime.broadcast_changes(text, text, text, text, text, record, record, text)"),
        QStringLiteral("realtime.\"cast\"(text, regtype)"),
        QStringLiteral("realtime.check_equality_op(realtime.equality_op, regtype, text, text)"),
        QStringLiteral(
                "realtime.check_equality_op(realtime.equality_op, regtype, text, text, boolean)"),
        QStringLiteral("realtime.is_visible_through_filters(realtime.wal_column[], "
                       "realtime.user_defined_filter[])"),
        QStringLiteral(
                "realtime.build_prepared_statement_sql(text, regclass, realtime.wal_column[])"),
        QStringLiteral("realtime.create_messages_partitions(date, date)"),
        QStringLiteral("realtime.drop_messages_partitions(interval)"),
    };
    for (const QString &function : functions) {
        QVERIFY2(!session.scalar(QStringLiteral("SELECT to_regprocedure(?) IS NULL"), { function })
                          .toBool(),
                 qPrintable(function));
    }
    // Defaults callers rely on: private defaults to true, level to 'ROW'.
    QCOMPARE(session.scalar(QStringLiteral("SELECT pg_get_function_arguments('realtime.send(jsonb, "
                                           "text, text, boolean)'::regprocedure)"))
                     .toString(),
             QStringLiteral("payload jsonb, event text, topic text, private boolean DEFAULT true"));
    QCOMPARE(session.scalar(QStringLiteral("SELECT pg_get_function_arguments("
                                           "'realtime.broadcast_changes(text, text, text, text, "
                                           "text, record, record, text)'::regprocedure)"))
                     .toString(),
             QStringLiteral("topic_name text, event_name text, operation text, table_name text, "
                            "table_schema text, "
                            "new record, old record, level text DEFAULT 'ROW'::text"));
}

void TenantSchemaTest::subscriptionInsertSetsRoleAndNormalises()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);
    RUN_SCRIPT(db->name(), PgSession::Role::Realtime, sql(kTodosTable));

    const std::optional<QList<QVariantList>> rows = session.rows(QStringLiteral(
            "INSERT INTO realtime.subscription (subscription_id, entity, filters, claims, "
            "selected_columns, action_filter) "
            "VALUES (gen_random_uuid(), 'public.todos', ARRAY[('title', 'eq', 'x', NULL), ('id', "
            "'in', '{3,1,2}', true), "
            "('id', 'gt', '0', false)]::realtime.user_defined_filter[], "
            "'{\"role\": \"authenticated\", \"sub\": \"user-1\"}', '{title,id,title}', 'UPDATE') "
            "RETURNING claims_role::text, filters::text, selected_columns::text, action_filter, "
            "created_at IS NOT NULL"));
    QVERIFY2(rows && rows->size() == 1, qPrintable(session.lastError()));
    const QVariantList row = rows->constFirst();
    QCOMPARE(row.value(0).toString(), QStringLiteral("authenticated"));
    // Sorted by column, then operator (enum order), value, negate; negate NULL stored as false.
    QCOMPARE(row.value(1).toString(),
             QStringLiteral("{\"(id,gt,0,f)\",\"(id,in,\\\"{3,1,2}\\\",t)\",\"(title,eq,x,f)\"}"));
    QCOMPARE(row.value(2).toString(), QStringLiteral("{id,title}"));
    QCOMPARE(row.value(3).toString(), QStringLiteral("UPDATE"));
    QCOMPARE(row.value(4).toBool(), true);

    // No filters, no selection: defaults; an empty selection is stored as NULL (all columns).
    QCOMPARE(session.scalar(QStringLiteral("INSERT INTO realtime.subscription (subscription_id, "
                                           "entity, claims, selected_columns) "
                                           "VALUES (gen_random_uuid(), 'public.todos', '{\"role\": "
                                           "\"service_role\"}', '{}') "
                                           "RETURNING claims_role::text || ' ' || filters::text || "
                                           "' ' || action_filter || ' ' "
                                           "|| coalesce(selected_columns::text, 'null')"))
                     .toString(),
             QStringLiteral("service_role {} * null"));
    // Every operator that is valid on a fitting column.
    QVERIFY2(session.exec(QStringLiteral(
                     "INSERT INTO realtime.subscription (subscription_id, entity, filters, claims) "
                     "VALUES (gen_random_uuid(), 'public.todos', ARRAY[('id', 'neq', '1', false), "
                     "('id', 'lt', '9', false), "
                     "('id', 'lte', '9', false), ('id', 'gte', '0', false), ('title', 'like', "
                     "'a%', false), "
                     "('code', 'ilike', 'A%', true), ('done', 'is', 'true', false), ('title', "
                     "'is', 'null', true), "
                     "('title', 'match', '^a.*b$', false), ('code', 'imatch', '[a-z]+', false), "
                     "('at', 'isdistinct', '2024-05-01T10:00:00Z', false), ('id', 'in', '{}', "
                     "false)]"
                     "::realtime.user_defined_filter[], '{\"role\": \"authenticated\"}')")),
             qPrintable(session.lastError()));
}

void TenantSchemaTest::subscriptionUpsertOnUniqueIndex()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);
    RUN_SCRIPT(db->name(), PgSession::Role::Realtime, sql(kTodosTable));

    // Same binding with the filters in another order: one row, claims updated (the server's
    // upsert on access_token refresh, spec §6.8).
    const QString upsert = QStringLiteral(
            "INSERT INTO realtime.subscription (subscription_id, entity, filters, claims, "
            "action_filter, selected_columns) "
            "VALUES ('22222222-2222-2222-2222-222222222222', 'public.todos', "
            "%1::realtime.user_defined_filter[], "
            "?::jsonb, '*', %2) "
            "ON CONFLICT (subscription_id, entity, filters, action_filter, "
            "coalesce(selected_columns, '{}')) "
            "DO UPDATE SET claims = excluded.claims, created_at = excluded.created_at");
    QVERIFY2(session.exec(
                     upsert.arg(QStringLiteral(
                                        "ARRAY[('title','eq','a',false),('id','eq','1',false)]"),
                                QStringLiteral("'{title,id}'::text[]")),
                     { QStringLiteral("{\"role\": \"authenticated\", \"exp\": 1}") }),
             qPrintable(session.lastError()));
    QVERIFY2(session.exec(
                     upsert.arg(QStringLiteral(
                                        "ARRAY[('id','eq','1',false),('title','eq','a',false)]"),
                                QStringLiteral("'{id,title}'::text[]")),
                     { QStringLiteral("{\"role\": \"authenticated\", \"exp\": 2}") }),
             qPrintable(session.lastError()));
    QCOMPARE(session.column(QStringLiteral("SELECT claims ->> 'exp' FROM realtime.subscription")),
             QStringList{ QStringLiteral("2") });
    // Another action filter or selection is another row.
    QVERIFY2(session.exec(QStringLiteral(
                     "INSERT INTO realtime.subscription (subscription_id, entity, claims, "
                     "action_filter) "
                     "VALUES ('22222222-2222-2222-2222-222222222222', 'public.todos', "
                     "'{\"role\": \"authenticated\"}', 'DELETE')")),
             qPrintable(session.lastError()));
    QCOMPARE(session.scalar(QStringLiteral("SELECT count(*) FROM realtime.subscription")).toInt(),
             2);
}

void TenantSchemaTest::subscriptionValidation_data()
{
    QTest::addColumn<QString>("filters");
    QTest::addColumn<QString>("selected");
    QTest::addColumn<QString>("role");
    QTest::addColumn<QString>("error");

    const QString none = QStringLiteral("NULL");
    const QString authenticated = QStringLiteral("authenticated");
    QTest::newRow("unknown column")
            << QStringLiteral("ARRAY[('nope','eq','1',false)]") << none << authenticated
            << QStringLiteral("invalid column for filter nope");
    QTest::newRow("column the role cannot select")
            << QStringLiteral("ARRAY[('secret','eq','1',false)]") << none << authenticated
            << QStringLiteral("invalid column for filter secret");
    QTest::newRow("column another role can select")
            << QStringLiteral("ARRAY[('secret','eq','1',false)]") << none
            << QStringLiteral("service_role") << QString();
    QTest::newRow("eq value not of the column type")
            << QStringLiteral("ARRAY[('id','eq','abc',false)]") << none << authenticated
            << QStringLiteral("invalid input syntax for type integer: \"abc\"");
    QTest::newRow("gte timestamp")
            << QStringLiteral("ARRAY[('at','gte','not a time',false)]") << none << authenticated
            << QStringLiteral("invalid input syntax for type timestamp with time zone");
    QTest::newRow("isdistinct value cast")
            << QStringLiteral("ARRAY[('done','isdistinct','maybe',false)]") << none << authenticated
            << QStringLiteral("invalid input syntax for type boolean: \"maybe\"");
    QTest::newRow("in element not of the column type")
            << QStringLiteral("ARRAY[('id','in','{1,x}',false)]") << none << authenticated
            << QStringLiteral("invalid input syntax for type integer: \"x\"");
    QTest::newRow("in not an array") << QStringLiteral("ARRAY[('id','in','1,2',false)]") << none
                                     << authenticated << QStringLiteral("malformed array literal");
    QTest::newRow("in with 100 values")
            << QStringLiteral("ARRAY[('id','in',(SELECT '{' || string_agg(g::text, ',') || '}' "
                              "FROM generate_series(1, 100) g),false)]")
            << none << authenticated << QString();
    QTest::newRow("in with 101 values")
            << QStringLiteral("ARRAY[('id','in',(SELECT '{' || string_agg(g::text, ',') || '}' "
                              "FROM generate_series(1, 101) g),false)]")
            << none << authenticated
            << QStringLiteral("too many values for `in` filter. Maximum 100");
    QTest::newRow("is with another value")
            << QStringLiteral("ARRAY[('done','is','maybe',false)]") << none << authenticated
            << QStringLiteral("invalid value for is filter: must be null, true, false, or unknown");
    QTest::newRow("is true on a non-boolean")
            << QStringLiteral("ARRAY[('id','is','true',false)]") << none << authenticated
            << QStringLiteral("is true filter requires a boolean column, got integer");
    QTest::newRow("is null on any column") << QStringLiteral("ARRAY[('id','is','null',true)]")
                                           << none << authenticated << QString();
    QTest::newRow("like on an integer")
            << QStringLiteral("ARRAY[('id','like','1%',false)]") << none << authenticated
            << QStringLiteral("operator like requires a text-compatible column type, got integer");
    QTest::newRow("ilike on bytea")
            << QStringLiteral("ARRAY[('blob','ilike','a%',false)]") << none << authenticated
            << QStringLiteral("operator ilike requires a text-compatible column type, got bytea");
    QTest::newRow("match on a boolean")
            << QStringLiteral("ARRAY[('done','match','t',false)]") << none << authenticated
            << QStringLiteral("operator match requires a text-compatible column type, got boolean");
    QTest::newRow("match with a bad regex")
            << QStringLiteral("ARRAY[('title','match','(a',false)]") << none << authenticated
            << QStringLiteral("invalid regular expression for match filter");
    QTest::newRow("imatch with a bad regex")
            << QStringLiteral("ARRAY[('code','imatch','[a-',false)]") << none << authenticated
            << QStringLiteral("invalid regular expression for imatch filter");
    QTest::newRow("unknown select column")
            << QStringLiteral("'{}'") << QStringLiteral("'{id,nope}'") << authenticated
            << QStringLiteral("invalid column for select nope");
    QTest::newRow("select column the role cannot select")
            << QStringLiteral("'{}'") << QStringLiteral("'{secret}'") << authenticated
            << QStringLiteral("invalid column for select secret");
    QTest::newRow("unknown role") << QStringLiteral("'{}'") << none
                                  << QStringLiteral("no_such_role")
                                  << QStringLiteral("role \"no_such_role\" does not exist");
    QTest::newRow("unknown role, with filters")
            << QStringLiteral("ARRAY[('id','eq','1',false)]") << none
            << QStringLiteral("no_such_role")
            << QStringLiteral("role \"no_such_role\" does not exist");
}

void TenantSchemaTest::subscriptionValidation()
{
    QFETCH(QString, filters);
    QFETCH(QString, selected);
    QFETCH(QString, role);
    QFETCH(QString, error);

    // One database for all rows (a failed insert changes nothing).
    if (!m_validationDb) {
        QString setupError;
        m_validationDb = migratedDatabase(PgSession::Role::Realtime, &setupError);
        QVERIFY2(m_validationDb, qPrintable(setupError));
        RUN_SCRIPT(m_validationDb->name(), PgSession::Role::Realtime, sql(kTodosTable));
    }
    PgSession session(m_env, m_validationDb->name(), PgSession::Role::Realtime);

    const QString insert = QStringLiteral("INSERT INTO realtime.subscription (subscription_id, "
                                          "entity, filters, claims, selected_columns) "
                                          "VALUES (gen_random_uuid(), 'public.todos', "
                                          "%1::realtime.user_defined_filter[], "
                                          "jsonb_build_object('role', ?::text), %2::text[]) "
                                          "RETURNING claims_role::text")
                                   .arg(filters, selected);
    const std::optional<QList<QVariantList>> rows = session.rows(insert, { role });
    if (error.isEmpty()) {
        QVERIFY2(rows, qPrintable(session.lastError()));
        QCOMPARE(rows->size(), 1);
        QCOMPARE(rows->constFirst().value(0).toString(), role);
    } else {
        QVERIFY2(!rows, "the insert was accepted");
        QVERIFY2(session.lastError().contains(error), qPrintable(session.lastError()));
    }
}

void TenantSchemaTest::sendAddsIdAndTopic()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);

    QVERIFY(session.exec(QStringLiteral("BEGIN")));
    QVERIFY2(session.exec(
                     QStringLiteral("SELECT realtime.send('{\"a\": 1}', 'ev', 'room:1', false)")),
             qPrintable(session.lastError()));
    // send sets realtime.topic for the rest of the transaction (INSERT policies read it).
    QCOMPARE(session.scalar(QStringLiteral("SELECT realtime.topic()")).toString(),
             QStringLiteral("room:1"));
    QVERIFY2(session.exec(QStringLiteral(
                     "SELECT realtime.send('{\"id\": \"mine\", \"b\": 2}', 'ev2', 'room:2')")),
             qPrintable(session.lastError()));
    QCOMPARE(session.scalar(QStringLiteral("SELECT realtime.topic()")).toString(),
             QStringLiteral("room:2"));
    QVERIFY(session.exec(QStringLiteral("COMMIT")));

    const std::optional<QList<QVariantList>> rows =
            session.rows(QStringLiteral("SELECT id::text, payload::text, event, topic, private, "
                                        "extension, binary_payload IS NULL, "
                                        "inserted_at IS NOT NULL AND updated_at IS NOT NULL FROM "
                                        "realtime.messages ORDER BY topic"));
    QVERIFY2(rows && rows->size() == 2, qPrintable(session.lastError()));
    const QVariantList first = rows->at(0);
    const QJsonObject firstPayload = jsonObject(first.value(1));
    QCOMPARE(firstPayload.value(QStringLiteral("a")).toInt(), 1);
    QCOMPARE(firstPayload.value(QStringLiteral("id")).toString(), first.value(0).toString());
    QVERIFY(!QUuid::fromString(first.value(0).toString()).isNull());
    QCOMPARE(first.value(2).toString(), QStringLiteral("ev"));
    QCOMPARE(first.value(3).toString(), QStringLiteral("room:1"));
    QCOMPARE(first.value(4).toBool(), false);
    QCOMPARE(first.value(5).toString(), QStringLiteral("broadcast"));
    QCOMPARE(first.value(6).toBool(), true);
    QCOMPARE(first.value(7).toBool(), true);

    const QVariantList second = rows->at(1);
    const QJsonObject secondPayload = jsonObject(second.value(1));
    QCOMPARE(secondPayload.value(QStringLiteral("id")).toString(), QStringLiteral("mine"));
    QCOMPARE(secondPayload.value(QStringLiteral("b")).toInt(), 2);
    QVERIFY(second.value(0).toString() != QStringLiteral("mine"));
    QCOMPARE(second.value(2).toString(), QStringLiteral("ev2"));
    QCOMPARE(second.value(4).toBool(), true); // private defaults to true
    QCOMPARE(second.value(5).toString(), QStringLiteral("broadcast"));
}

void TenantSchemaTest::sendBinaryStoresBytes()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);

    QVERIFY2(session.exec(QStringLiteral(
                     "SELECT realtime.send_binary('\\x00ff10'::bytea, 'bin', 'room:b')")),
             qPrintable(session.lastError()));
    const std::optional<QList<QVariantList>> rows =
            session.rows(QStringLiteral("SELECT encode(binary_payload, 'hex'), payload IS NULL, "
                                        "event, topic, private, extension FROM realtime.messages"));
    QVERIFY2(rows && rows->size() == 1, qPrintable(session.lastError()));
    const QVariantList row = rows->constFirst();
    QCOMPARE(row.value(0).toString(), QStringLiteral("00ff10"));
    QCOMPARE(row.value(1).toBool(), true);
    QCOMPARE(row.value(2).toString(), QStringLiteral("bin"));
    QCOMPARE(row.value(3).toString(), QStringLiteral("room:b"));
    QCOMPARE(row.value(4).toBool(), true);
    QCOMPARE(row.value(5).toString(), QStringLiteral("broadcast"));
}

void TenantSchemaTest::sendSwallowsErrorsAsWarnings()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);

    // A NULL topic violates NOT NULL; a day without partition has nowhere to go. Neither fails
    // the caller, nothing is stored, and the WARNING says why with the documented prefix.
    QStringList notices;
    QString error = runScript(m_env, db->name(), PgSession::Role::Realtime,
                              QStringLiteral("SELECT realtime.send('{}', 'e', NULL); "
                                             "SELECT realtime.send_binary('\\x01', 'e', NULL)"),
                              &notices);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(notices.size(), 2);
    for (const QString &notice : std::as_const(notices)) {
        QVERIFY2(notice.startsWith(QStringLiteral(
                         "WARNING:  WarnSendingBroadcastMessage: null value in column \"topic\"")),
                 qPrintable(notice));
    }

    QCOMPARE(
            session.scalar(QStringLiteral(
                                   "SELECT realtime.drop_messages_partitions(interval '-10 days')"))
                    .toInt(),
            5);
    error = runScript(m_env, db->name(), PgSession::Role::Realtime,
                      QStringLiteral("SELECT realtime.send('{}', 'e', 'room')"), &notices);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(notices.size(), 1);
    QVERIFY2(notices.constFirst().startsWith(
                     QStringLiteral("WARNING:  WarnSendingBroadcastMessage: no partition of "
                                    "relation \"messages\"")),
             qPrintable(notices.constFirst()));
    QCOMPARE(session.scalar(QStringLiteral("SELECT count(*) FROM realtime.messages")).toInt(), 0);
}

void TenantSchemaTest::broadcastChangesFromRowTrigger()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);
    RUN_SCRIPT(db->name(), PgSession::Role::Realtime, sql(kBroadcastTrigger));

    QVERIFY2(session.exec(QStringLiteral("INSERT INTO public.notes VALUES (7, 'hello')")),
             qPrintable(session.lastError()));
    QVERIFY2(session.exec(QStringLiteral("UPDATE public.notes SET body = 'world' WHERE id = 7")),
             qPrintable(session.lastError()));
    QVERIFY2(session.exec(QStringLiteral("DELETE FROM public.notes WHERE id = 7")),
             qPrintable(session.lastError()));

    const std::optional<QList<QVariantList>> rows = session.rows(
            QStringLiteral("SELECT id::text, payload::text, event, topic, private, extension FROM "
                           "realtime.messages ORDER BY inserted_at, "
                           "CASE event WHEN 'INSERT' THEN 1 WHEN 'UPDATE' THEN 2 ELSE 3 END"));
    QVERIFY2(rows && rows->size() == 3, qPrintable(session.lastError()));

    const QStringList operations = { QStringLiteral("INSERT"), QStringLiteral("UPDATE"),
                                     QStringLiteral("DELETE") };
    for (int i = 0; i < 3; ++i) {
        const QVariantList row = rows->at(i);
        const QString operation = operations.at(i);
        const QJsonObject payload = jsonObject(row.value(1));
        QCOMPARE(row.value(2).toString(), operation);
        QCOMPARE(row.value(3).toString(), QStringLiteral("note:7"));
        QCOMPARE(row.value(4).toBool(), true);
        QCOMPARE(row.value(5).toString(), QStringLiteral("broadcast"));
        QCOMPARE(payload.value(QStringLiteral("operation")).toString(), operation);
        QCOMPARE(payload.value(QStringLiteral("table")).toString(), QStringLiteral("notes"));
        QCOMPARE(payload.value(QStringLiteral("schema")).toString(), QStringLiteral("public"));
        QCOMPARE(payload.value(QStringLiteral("id")).toString(), row.value(0).toString());
        QCOMPARE(payload.keys().size(), 6);
        const QJsonValue record = payload.value(QStringLiteral("record"));
        const QJsonValue oldRecord = payload.value(QStringLiteral("old_record"));
        if (operation == QLatin1String("INSERT")) {
            QVERIFY(oldRecord.isNull());
            QCOMPARE(record.toObject().value(QStringLiteral("body")).toString(),
                     QStringLiteral("hello"));
            QCOMPARE(record.toObject().value(QStringLiteral("id")).toInt(), 7);
        } else if (operation == QLatin1String("UPDATE")) {
            QCOMPARE(oldRecord.toObject().value(QStringLiteral("body")).toString(),
                     QStringLiteral("hello"));
            QCOMPARE(record.toObject().value(QStringLiteral("body")).toString(),
                     QStringLiteral("world"));
        } else {
            QVERIFY(record.isNull());
            QCOMPARE(oldRecord.toObject().value(QStringLiteral("body")).toString(),
                     QStringLiteral("world"));
        }
    }
}

void TenantSchemaTest::broadcastChangesRefusesStatementLevel()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);
    RUN_SCRIPT(db->name(), PgSession::Role::Realtime, sql(kBroadcastTrigger));
    RUN_SCRIPT(
            db->name(), PgSession::Role::Realtime,
            QStringLiteral("DROP TRIGGER notes_broadcast ON public.notes; "
                           "CREATE TRIGGER notes_broadcast_statement AFTER INSERT ON public.notes "
                           "FOR EACH STATEMENT EXECUTE FUNCTION public.notes_broadcast()"));

    QVERIFY(!session.exec(QStringLiteral("INSERT INTO public.notes VALUES (1, 'x')")));
    QVERIFY2(session.lastError().contains(
                     QStringLiteral("Failed to process the row: function can only be triggered for "
                                    "each row, not for each statement")),
             qPrintable(session.lastError()));
    QCOMPARE(session.scalar(QStringLiteral("SELECT count(*) FROM public.notes")).toInt(), 0);

    QVERIFY(!session.exec(QStringLiteral("SELECT realtime.broadcast_changes('t', 'e', 'TRUNCATE', "
                                         "'notes', 'public', NULL, NULL)")));
    QVERIFY2(session.lastError().contains(QStringLiteral(
                     "Failed to process the row: Unexpected operation type: TRUNCATE")),
             qPrintable(session.lastError()));
    QCOMPARE(session.scalar(QStringLiteral("SELECT count(*) FROM realtime.messages")).toInt(), 0);
}

void TenantSchemaTest::topicFunction()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);

    QVERIFY(session.scalar(QStringLiteral("SELECT realtime.topic()")).isNull());
    QVERIFY(session.exec(QStringLiteral("BEGIN")));
    QVERIFY(session.exec(QStringLiteral("SET LOCAL realtime.topic = 'room:42'")));
    QCOMPARE(session.scalar(QStringLiteral("SELECT realtime.topic()")).toString(),
             QStringLiteral("room:42"));
    QVERIFY(session.exec(QStringLiteral("SET LOCAL realtime.topic = ''")));
    QVERIFY(session.scalar(QStringLiteral("SELECT realtime.topic()")).isNull());
    QVERIFY(session.exec(QStringLiteral("ROLLBACK")));
    // Once set in the session and rolled back, the setting exists but is empty: still NULL.
    QVERIFY(session.scalar(QStringLiteral("SELECT realtime.topic()")).isNull());
    // The API roles can call it (policies run as them).
    QVERIFY(session.exec(QStringLiteral("BEGIN")));
    QVERIFY(session.exec(QStringLiteral("SET LOCAL ROLE anon")));
    QVERIFY(session.exec(QStringLiteral("SELECT set_config('realtime.topic', 'room:anon', true)")));
    QCOMPARE(session.scalar(QStringLiteral("SELECT realtime.topic()")).toString(),
             QStringLiteral("room:anon"));
    QVERIFY(session.exec(QStringLiteral("ROLLBACK")));
}

void TenantSchemaTest::partitions()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);

    const QDate today = QDateTime::currentDateTimeUtc().date();
    const auto name = [](const QDate &day) -> QString {
        return QStringLiteral("messages_") + day.toString(QStringLiteral("yyyy_MM_dd"));
    };
    const QString partitions = QStringLiteral(
            "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = 'realtime.messages'::regclass ORDER BY 1");
    QStringList expected;
    for (int offset = -1; offset <= 3; ++offset) {
        expected.append(name(today.addDays(offset)));
    }
    QCOMPARE(session.column(partitions), expected);
    // Bounds: the whole UTC day.
    QCOMPARE(session.scalar(QStringLiteral("SELECT pg_get_expr(relpartbound, oid) FROM pg_class "
                                           "WHERE oid = ?::regclass"),
                            { QString(QStringLiteral("realtime.") + name(today)) })
                     .toString(),
             QStringLiteral("FOR VALUES FROM ('%1 00:00:00') TO ('%2 00:00:00')")
                     .arg(today.toString(Qt::ISODate), today.addDays(1).toString(Qt::ISODate)));

    // Creating is idempotent and counts what it made.
    const QString create =
            QStringLiteral("SELECT realtime.create_messages_partitions(?::date, ?::date)");
    QCOMPARE(session.scalar(create,
                            { today.addDays(-10).toString(Qt::ISODate),
                              today.addDays(-8).toString(Qt::ISODate) })
                     .toInt(),
             3);
    QCOMPARE(session.scalar(create,
                            { today.addDays(-10).toString(Qt::ISODate),
                              today.addDays(-8).toString(Qt::ISODate) })
                     .toInt(),
             0);
    QCOMPARE(session.scalar(create,
                            { today.toString(Qt::ISODate), today.addDays(4).toString(Qt::ISODate) })
                     .toInt(),
             1);

    // Rows land in their day's partition.
    QVERIFY2(session.exec(
                     QStringLiteral("INSERT INTO realtime.messages (topic, extension, inserted_at) "
                                    "VALUES ('t', 'broadcast', ?::timestamp)"),
                     { QString(today.addDays(-9).toString(Qt::ISODate)
                               + QStringLiteral(" 12:00:00")) }),
             qPrintable(session.lastError()));
    QCOMPARE(session.scalar(QStringLiteral("SELECT c.relname::text FROM realtime.messages m JOIN "
                                           "pg_class c ON c.oid = m.tableoid"))
                     .toString(),
             name(today.addDays(-9)));

    // Dropping keeps the days within the retention (72 h: the day of now - 72 h and later).
    const QDate cutoff = QDateTime::currentDateTimeUtc().addSecs(-72 * 3600).date();
    int older = 0;
    for (const QString &partition : session.column(partitions)) {
        if (QDate::fromString(partition.mid(9), QStringLiteral("yyyy_MM_dd")) < cutoff) {
            ++older;
        }
    }
    QCOMPARE(older, 3);
    QCOMPARE(session.scalar(QStringLiteral("SELECT realtime.drop_messages_partitions()")).toInt(),
             3);
    QCOMPARE(
            session.scalar(QStringLiteral(
                                   "SELECT realtime.drop_messages_partitions(interval '72 hours')"))
                    .toInt(),
            0);
    QCOMPARE(session.scalar(QStringLiteral("SELECT count(*) FROM realtime.messages")).toInt(), 0);
    QStringList kept = expected;
    kept.append(name(today.addDays(4)));
    QCOMPARE(session.column(partitions), kept);

    // Not for PUBLIC: anon may neither create nor drop partitions.
    QVERIFY(!session
                     .scalar(QStringLiteral(
                             "SELECT has_function_privilege('anon', "
                             "'realtime.create_messages_partitions(date, date)', 'EXECUTE')"))
                     .toBool());
    QVERIFY(!session.scalar(QStringLiteral(
                                    "SELECT has_function_privilege('anon', "
                                    "'realtime.drop_messages_partitions(interval)', 'EXECUTE')"))
                     .toBool());
}

void TenantSchemaTest::rlsPolicyAsAuthenticated()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);
    RUN_SCRIPT(db->name(), PgSession::Role::Realtime, sql(kPolicies));

    // The read check of spec §7.2: a probe row inserted by the (owning) server role, then read
    // back as the JWT role with its claims and the topic set; always rolled back.
    const auto readCheck = [&session](const QString &role, const QString &topic,
                                      const QString &sub) -> int {
        const QString probe = QUuid::createUuid().toString(QUuid::WithoutBraces);
        const QString claims = QStringLiteral("{\"role\": \"%1\", \"sub\": \"%2\"}").arg(role, sub);
        int visible = -1; // error
        if (session.exec(QStringLiteral("BEGIN"))
            && session.exec(QStringLiteral("INSERT INTO realtime.messages (id, topic, extension, "
                                           "inserted_at, updated_at) "
                                           "VALUES (?::uuid, ?, 'broadcast', now(), now())"),
                            { probe, topic })
            && session.exec(QStringLiteral("SELECT set_config('role', ?, true), "
                                           "set_config('realtime.topic', ?, true), "
                                           "set_config('request.jwt.claims', ?, true), "
                                           "set_config('request.jwt.claim.sub', ?, true), "
                                           "set_config('request.jwt.claim.role', ?, true)"),
                            { role, topic, claims, sub, role })) {
            const QVariant count = session.scalar(
                    QStringLiteral("SELECT count(*) FROM realtime.messages WHERE id = ?::uuid"),
                    { probe });
            if (count.isValid()) {
                visible = count.toInt();
            }
        }
        session.exec(QStringLiteral("ROLLBACK"));
        return visible;
    };

    QCOMPARE(readCheck(QStringLiteral("authenticated"), QStringLiteral("topic:1"),
                       QStringLiteral("user-1")),
             1);
    QCOMPARE(readCheck(QStringLiteral("authenticated"), QStringLiteral("other:1"),
                       QStringLiteral("user-1")),
             0);
    QCOMPARE(readCheck(QStringLiteral("authenticated"), QStringLiteral("topic:1"),
                       QStringLiteral("user-2")),
             0);
    // No policy for anon: denied; service_role bypasses RLS.
    QCOMPARE(readCheck(QStringLiteral("anon"), QStringLiteral("topic:1"), QStringLiteral("user-1")),
             0);
    QCOMPARE(readCheck(QStringLiteral("service_role"), QStringLiteral("other:1"),
                       QStringLiteral("x")),
             1);

    // The write check of spec §7.3: insert as the JWT role; an RLS violation is insufficient_privilege.
    // (Topics are test constants, inlined: a bound statement left in an aborted transaction
    // makes QPSQL warn when it frees it.)
    const auto writeCheck = [&session](const QString &topic) -> QString {
        const bool ok = session.exec(QStringLiteral("BEGIN"))
                && session.exec(QStringLiteral("SET LOCAL ROLE authenticated"))
                && session.exec(QStringLiteral("SELECT set_config('realtime.topic', '%1', true)")
                                        .arg(topic))
                && session.exec(QStringLiteral("INSERT INTO realtime.messages (topic, extension) "
                                               "VALUES ('%1', 'broadcast')")
                                        .arg(topic));
        const QString error = session.lastError();
        session.exec(QStringLiteral("ROLLBACK"));
        return ok ? QString() : error;
    };
    QCOMPARE(writeCheck(QStringLiteral("topic:9")), QString());
    const QString denied = writeCheck(QStringLiteral("room:9"));
    QVERIFY2(denied.contains(QStringLiteral("new row violates row-level security policy")),
             qPrintable(denied));

    // realtime.send as authenticated: the topic it sets is what the INSERT policy sees; the
    // refused one is a WARNING.
    QStringList notices;
    const QString error = runScript(m_env, db->name(), PgSession::Role::Realtime,
                                    QStringLiteral("SET LOCAL ROLE authenticated; "
                                                   "SELECT realtime.send('{}', 'e', 'topic:send'); "
                                                   "SELECT realtime.send('{}', 'e', 'room:send')"),
                                    &notices);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(notices,
             QStringList{ QStringLiteral("WARNING:  WarnSendingBroadcastMessage: new row violates "
                                         "row-level security policy for table \"messages\"") });
    QCOMPARE(session.column(QStringLiteral("SELECT topic FROM realtime.messages")),
             QStringList{ QStringLiteral("topic:send") });
}

void TenantSchemaTest::publications()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);

    QCOMPARE(session.column(QStringLiteral(
                     "SELECT schemaname || '.' || tablename FROM pg_publication_tables "
                     "WHERE pubname = 'supabase_realtime_messages_publication'")),
             QStringList{ QStringLiteral("realtime.messages") });
    QCOMPARE(
            session.scalar(QStringLiteral(
                                   "SELECT pubviaroot::text || pubinsert::text FROM pg_publication "
                                   "WHERE pubname = 'supabase_realtime_messages_publication'"))
                    .toString(),
            QStringLiteral("truetrue"));
    QCOMPARE(session.scalar(QStringLiteral("SELECT count(*) FROM pg_publication WHERE pubname = "
                                           "'supabase_realtime'"))
                     .toInt(),
             1);
    QCOMPARE(session.scalar(QStringLiteral("SELECT count(*) FROM pg_publication_tables WHERE "
                                           "pubname = 'supabase_realtime'"))
                     .toInt(),
             0);

    // A user's tables added to supabase_realtime stay there when the migrations run again.
    RUN_SCRIPT(db->name(), PgSession::Role::Realtime,
               QStringLiteral("CREATE TABLE public.items (id int PRIMARY KEY); "
                              "ALTER PUBLICATION supabase_realtime ADD TABLE public.items"));
    const QString error = applyMigrations(m_env, db->name(), PgSession::Role::Realtime);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(session.column(QStringLiteral(
                     "SELECT schemaname || '.' || tablename FROM pg_publication_tables "
                     "WHERE pubname = 'supabase_realtime'")),
             QStringList{ QStringLiteral("public.items") });
}

void TenantSchemaTest::filterHelpers()
{
    MIGRATED_DB(db, PgSession::Role::Realtime);
    PgSession session(m_env, db->name(), PgSession::Role::Realtime);
    RUN_SCRIPT(db->name(), PgSession::Role::Realtime, sql(kTodosTable));

    struct Check
    {
        const char *sql;
        const char *expected;
    };
    const Check checks[] = {
        { "realtime.check_equality_op('eq', 'int4', '1', '1')", "true" },
        { "realtime.check_equality_op('eq', 'int4', '1', '2')", "false" },
        { "realtime.check_equality_op('neq', 'int4', '1', '2', false)", "true" },
        { "realtime.check_equality_op('lt', 'int4', '1', '2', true)", "false" },
        { "realtime.check_equality_op('in', 'int4', '2', '{1,2,3}', false)", "true" },
        { "realtime.check_equality_op('in', 'text', 'c,d', '{a,\"c,d\"}', false)", "true" },
        { "realtime.check_equality_op('like', 'text', 'abc', 'a%', false)", "true" },
        { "realtime.check_equality_op('ilike', 'varchar', 'ABC', 'a%', false)", "true" },
        { "realtime.check_equality_op('match', 'text', 'ABC', '^a', false)", "false" },
        { "realtime.check_equality_op('imatch', 'text', 'ABC', '^a', false)", "true" },
        { "realtime.check_equality_op('is', 'bool', NULL, 'null', false)", "true" },
        { "realtime.check_equality_op('is', 'bool', 'true', 'true', true)", "false" },
        { "realtime.check_equality_op('is', 'bool', NULL, 'unknown', false)", "true" },
        { "realtime.check_equality_op('isdistinct', 'int4', NULL, '1', false)", "true" },
        { "realtime.check_equality_op('isdistinct', 'int4', '1', '1', true)", "true" },
        { "realtime.check_equality_op('eq', 'int4', NULL, '1', false)", "<null>" },
        { "realtime.\"cast\"('42', 'int4')::text", "42" },
        { "realtime.\"cast\"('t', 'bool')::text", "true" },
        { "realtime.\"cast\"('{1,2}', 'int4[]')::text", "[1, 2]" },
        { "realtime.\"cast\"('\\x0102', 'bytea')::text", "\"\\\\x0102\"" },
        { "realtime.is_visible_through_filters(ARRAY[('id', 'int4', 23, '7', true, "
          "true)]::realtime.wal_column[], "
          "ARRAY[('id', 'gt', '5', false)]::realtime.user_defined_filter[])",
          "true" },
        { "realtime.is_visible_through_filters(ARRAY[('id', 'int4', 23, '7', true, "
          "true)]::realtime.wal_column[], "
          "ARRAY[('id', 'gt', '5', true)]::realtime.user_defined_filter[])",
          "false" },
        { "realtime.is_visible_through_filters(ARRAY[('id', 'int4', 23, '7', true, "
          "true)]::realtime.wal_column[], "
          "ARRAY[('id', 'gt', '5', false), ('title', 'eq', 'x', "
          "false)]::realtime.user_defined_filter[])",
          "false" },
        { "realtime.is_visible_through_filters(ARRAY[('title', 'text', 25, 'null', false, "
          "true)]::realtime.wal_column[], "
          "ARRAY[('title', 'eq', 'x', false)]::realtime.user_defined_filter[])",
          "false" },
        { "realtime.is_visible_through_filters(ARRAY[('title', 'text', 25, 'null', false, "
          "true)]::realtime.wal_column[], "
          "ARRAY[('title', 'is', 'null', false)]::realtime.user_defined_filter[])",
          "true" },
        { "realtime.is_visible_through_filters(ARRAY[('id', 'int4', 23, '7', true, "
          "true)]::realtime.wal_column[], '{}')",
          "true" },
        { "realtime.build_prepared_statement_sql('probe_1', 'public.todos', ARRAY[('id', 'int4', "
          "23, '7', true, true), "
          "('title', 'text', 25, '\"x\"', false, true)]::realtime.wal_column[])",
          "PREPARE probe_1 AS SELECT EXISTS (SELECT 1 FROM public.todos WHERE id = '7')" },
        { "realtime.build_prepared_statement_sql('probe_2', 'public.todos', "
          "ARRAY[('title', 'text', 25, '\"x\"', false, true)]::realtime.wal_column[])",
          "<null>" },
    };
    for (const Check &check : checks) {
        const QStringList result =
                session.column(QStringLiteral("SELECT ") + QString::fromUtf8(check.sql));
        QVERIFY2(result == QStringList{ QString::fromUtf8(check.expected) },
                 qPrintable(QStringLiteral("%1 gave %2")
                                    .arg(QString::fromUtf8(check.sql), result.join(u'|'))));
    }
    // The prepared statement runs.
    QVERIFY2(session.exec(QStringLiteral("INSERT INTO public.todos (id) VALUES (7)")),
             qPrintable(session.lastError()));
    QVERIFY2(session.exec(QStringLiteral("PREPARE probe_1 AS SELECT EXISTS (SELECT 1 FROM "
                                         "public.todos WHERE id = '7')")),
             qPrintable(session.lastError()));
    QCOMPARE(session.scalar(QStringLiteral("EXECUTE probe_1")).toBool(), true);
    QVERIFY(!session.exec(QStringLiteral(
            "SELECT realtime.check_equality_op('is', 'bool', 'true', 'maybe', false)")));
    QVERIFY2(session.lastError().contains(QStringLiteral(
                     "invalid value for is filter: must be null, true, false, or unknown")),
             qPrintable(session.lastError()));
}

QTEST_GUILESS_MAIN(TenantSchemaTest)
#include "tst_tenant_schema.moc"
