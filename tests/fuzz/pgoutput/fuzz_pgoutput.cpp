// libFuzzer target for the pgoutput decoder and the value typing: WAL bytes come from a tenant's
// database, which the server does not control (a hostile or broken tenant, a proxy in between).
// Every input is decoded as one message; for tuples, every text value is typed with jsonValue()
// under several type names (arrays included), and Relation/Type names go through it as well.
// Besides crashes, the target aborts when a result breaks the documented promises: errors carry
// a message and an offset inside the input, and a decoded message re-encodes to the input.
//
// Seed corpus: one file per message kind, written once by gen_corpus.py (kept beside this file).
#include "server/pgoutput/decoder.h"
#include "server/pgoutput/types.h"
#include "server/pgoutput/values.h"

#include <QJsonValue>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <variant>

namespace {

using namespace rt::pgoutput;

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

const QByteArrayView TypeNames[] = { "int4",  "int8",   "numeric", "float8",      "bool",
                                     "jsonb", "json",   "bytea",   "timestamptz", "timestamp",
                                     "text",  "_int4",  "_text",   "_jsonb",      "_timestamptz",
                                     "_box",  "_bytea", "__int4",  "_numeric",    "mood" };

void typeValues(const TupleData &tuple)
{
    for (const Value &value : tuple.values) {
        require(value.kind == Value::Kind::Text || value.kind == Value::Kind::Binary
                || value.bytes.isEmpty());
        for (const QByteArrayView type : TypeNames) {
            const QJsonValue json = jsonValue(type, value.bytes);
            require(!json.isUndefined());
        }
    }
}

// Re-encoding of the fields the decoder read: a successful decode consumed every byte, so
// writing the message back must give the input again.
class Writer
{
public:
    void u8(quint8 v) { m_out += char(v); }
    void be(quint64 v, int n)
    {
        for (int i = n - 1; i >= 0; --i) {
            m_out += char((v >> (8 * i)) & 0xff);
        }
    }
    void str(const QByteArray &s)
    {
        m_out += s;
        m_out += '\0';
    }
    void tuple(const TupleData &t)
    {
        be(quint64(t.values.size()), 2);
        for (const Value &v : t.values) {
            u8(quint8(v.kind));
            if (v.kind == Value::Kind::Text || v.kind == Value::Kind::Binary) {
                be(quint64(v.bytes.size()), 4);
                m_out += v.bytes;
            }
        }
    }
    QByteArray m_out;
};

template <typename T, typename M>
constexpr bool Is = std::is_same_v<std::decay_t<M>, T>;

void encodeInto(Writer &w, const auto &m)
{
    using M = decltype(m);
    if constexpr (Is<Begin, M>) {
        w.u8('B');
        w.be(m.finalLsn, 8);
        w.be(quint64(m.commitTime), 8);
        w.be(m.xid, 4);
    } else if constexpr (Is<Commit, M>) {
        w.u8('C');
        w.u8(m.flags);
        w.be(m.commitLsn, 8);
        w.be(m.endLsn, 8);
        w.be(quint64(m.commitTime), 8);
    } else if constexpr (Is<Origin, M>) {
        w.u8('O');
        w.be(m.commitLsn, 8);
        w.str(m.name);
    } else if constexpr (Is<Relation, M>) {
        w.u8('R');
        w.be(m.oid, 4);
        w.str(m.nspname);
        w.str(m.relname);
        w.u8(quint8(m.replicaIdentity));
        w.be(quint64(m.columns.size()), 2);
        for (const Column &c : m.columns) {
            w.u8(c.isKey ? 1 : 0);
            w.str(c.name);
            w.be(c.typeOid, 4);
            w.be(quint32(c.typmod), 4);
        }
    } else if constexpr (Is<Type, M>) {
        w.u8('Y');
        w.be(m.oid, 4);
        w.str(m.nspname);
        w.str(m.name);
    } else if constexpr (Is<Insert, M>) {
        w.u8('I');
        w.be(m.relOid, 4);
        w.u8('N');
        w.tuple(m.newTuple);
    } else if constexpr (Is<Update, M>) {
        w.u8('U');
        w.be(m.relOid, 4);
        if (m.key) {
            w.u8('K');
            w.tuple(*m.key);
        }
        if (m.old) {
            w.u8('O');
            w.tuple(*m.old);
        }
        w.u8('N');
        w.tuple(m.newTuple);
    } else if constexpr (Is<Delete, M>) {
        w.u8('D');
        w.be(m.relOid, 4);
        w.u8(m.key ? 'K' : 'O');
        w.tuple(m.key ? *m.key : *m.old);
    } else if constexpr (Is<Truncate, M>) {
        w.u8('T');
        w.be(quint64(m.relOids.size()), 4);
        w.u8(m.options);
        for (const quint32 oid : m.relOids) {
            w.be(oid, 4);
        }
    } else {
        static_assert(Is<LogicalMessage, M>);
        w.u8('M');
        w.u8(m.transactional ? 1 : 0);
        w.be(m.lsn, 8);
        w.str(m.prefix);
        w.be(quint64(m.content.size()), 4);
        w.m_out += m.content;
    }
}

QByteArray encode(const Message &message)
{
    Writer w;
    std::visit([&w](const auto &m) { encodeInto(w, m); }, message);
    return w.m_out;
}

void checkFields(const auto &m)
{
    using M = decltype(m);
    if constexpr (Is<Begin, M>) {
        require(!commitTimestampText(m.commitTime).isEmpty());
        require(parseLsn(formatLsn(m.finalLsn).toLatin1()) == m.finalLsn);
    } else if constexpr (Is<Commit, M>) {
        require(!commitTimestampText(m.commitTime).isEmpty());
        require(parseLsn(formatLsn(m.endLsn).toLatin1()) == m.endLsn);
    } else if constexpr (Is<Relation, M>) {
        for (const Column &c : m.columns) {
            (void)builtinTypeName(c.typeOid);
            (void)jsonValue(c.name, m.relname);
        }
    } else if constexpr (Is<Type, M>) {
        (void)jsonValue(m.name, m.nspname);
    } else if constexpr (Is<Insert, M>) {
        typeValues(m.newTuple);
    } else if constexpr (Is<Update, M>) {
        require(!(m.key && m.old));
        typeValues(m.newTuple);
        if (m.key) {
            typeValues(*m.key);
        }
        if (m.old) {
            typeValues(*m.old);
        }
    } else if constexpr (Is<Delete, M>) {
        require(m.key.has_value() != m.old.has_value());
        typeValues(m.key ? *m.key : *m.old);
    } else if constexpr (Is<LogicalMessage, M>) {
        // Broadcast-from-database payloads are JSON texts in logical messages.
        (void)jsonValue("jsonb", m.content);
    }
}

void checkSuccess(const Message &message, QByteArrayView input)
{
    // Column flags other than the key bit are not kept, so a Relation only keeps its size.
    const QByteArray encoded = encode(message);
    if (std::holds_alternative<Relation>(message)) {
        require(encoded.size() == input.size());
    } else {
        require(encoded == input);
    }
    std::visit([](const auto &m) { checkFields(m); }, message);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView input(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const auto result = decode(input);
    if (result.ok()) {
        checkSuccess(*result, input);
    } else {
        require(!result.error().message.isEmpty());
        require(result.error().offset >= 0 && result.error().offset <= input.size());
    }
    // The value typing on its own: the raw input as a value of every type.
    if (size <= 4096) {
        for (const QByteArrayView type : TypeNames) {
            (void)jsonValue(type, input);
        }
    }
    return 0;
}
