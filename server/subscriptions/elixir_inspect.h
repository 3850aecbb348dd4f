#pragma once

#include <QByteArray>
#include <QJsonValue>
#include <QList>
#include <QString>

#include <memory>
#include <utility>

// Elixir's `inspect/2` for the few term shapes that reach user-visible texts of the reference
// server (spec/server-protocol.md §3.5, §6.1, §6.2): decoded JSON (string-keyed maps, lists,
// binaries, numbers, nil/true/false) and the filter tuples {col, op, value, negate}.
//
// Replicates Elixir 1.19.5 (the upstream image): string escaping and the printable check,
// `printable_limit` 4096, `limit` 50 shared by nested containers (1.19 threads the remaining limit
// through containers), charlists (`~c"..."`) for lists of ASCII-printable integers, the shortest
// float form of OTP's `float_to_list(F, [short])`, maps with up to 32 keys in key order, and, with
// `pretty`, the Wadler-style layout of Inspect.Algebra at width 80 (lists of tuples one per line,
// lists of strings filled). Pure functions, callable from any thread.
namespace rt::subscriptions {

// An Elixir term built from JSON or by hand. Immutable once built, cheap to copy (shared).
class ElixirTerm
{
public:
    enum class Kind { Atom, Integer, Float, Binary, List, Tuple, Map };

    static ElixirTerm nil() { return atom(QByteArrayLiteral("nil")); }
    static ElixirTerm boolean(bool value);
    // Printed verbatim; only for the atoms nil, true, false (no quoting rules implemented).
    static ElixirTerm atom(const QByteArray &name);
    static ElixirTerm integer(qint64 value);
    static ElixirTerm floating(double value);
    static ElixirTerm binary(const QByteArray &bytes);
    static ElixirTerm string(const QString &text) { return binary(text.toUtf8()); }
    static ElixirTerm list(QList<ElixirTerm> items);
    static ElixirTerm tuple(QList<ElixirTerm> items);
    // Entries are put in the order Elixir prints a small map (keys in term order; for binary
    // keys: bytewise, a prefix first). Maps above 32 keys are hash-ordered in Erlang; they are
    // printed sorted too (a known difference).
    static ElixirTerm map(QList<std::pair<ElixirTerm, ElixirTerm>> entries);

    // What Jason produces for a JSON value: objects → maps with binary keys, arrays → lists,
    // strings → binaries, null/true/false → atoms, numbers → integers or floats. Qt keeps integral
    // JSON numbers (also `1.0`, `1e2`) as integers, so only non-integral or out-of-range numbers
    // (and QJsonValues built from a double) print as floats.
    static ElixirTerm fromJson(const QJsonValue &value);

    Kind kind() const;

private:
    struct Data;
    explicit ElixirTerm(std::shared_ptr<const Data> data) : m_data(std::move(data)) { }
    std::shared_ptr<const Data> m_data;
    friend class Inspector;
};

struct InspectOptions
{
    bool pretty = false; // `inspect(term, pretty: true)`: line breaks at `width`
    int width = 80;
    int limit = 50;
    int printableLimit = 4096;
};

// `inspect(term, opts)` as Elixir prints it (UTF-8 bytes decoded into a QString).
QString inspect(const ElixirTerm &term, const InspectOptions &options = {});

// `inspect(decoded_json)`, e.g. `%{"filter" => nil, "schema" => "public"}`.
QString elixirInspect(const QJsonValue &value);

} // namespace rt::subscriptions
