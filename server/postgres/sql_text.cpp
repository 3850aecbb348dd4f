#include "server/postgres/sql_text.h"

namespace rt::postgres {

QByteArray quoteIdentifier(QByteArrayView name)
{
    QByteArray out;
    out.reserve(name.size() + 2);
    out.append('"');
    for (const char c : name) {
        if (c == '"') {
            out.append('"');
        }
        out.append(c);
    }
    out.append('"');
    return out;
}

QByteArray quoteLiteral(QByteArrayView value)
{
    const bool hasBackslash = value.contains('\\');
    QByteArray out;
    out.reserve(value.size() + 3);
    if (hasBackslash) {
        out.append('E');
    }
    out.append('\'');
    for (const char c : value) {
        if (c == '\'' || (hasBackslash && c == '\\')) {
            out.append(c);
        }
        out.append(c);
    }
    out.append('\'');
    return out;
}

QByteArray quoteConninfoValue(QByteArrayView value)
{
    QByteArray out;
    out.reserve(value.size() + 2);
    out.append('\'');
    for (const char c : value) {
        if (c == '\'' || c == '\\') {
            out.append('\\');
        }
        out.append(c);
    }
    out.append('\'');
    return out;
}

QByteArray textArrayLiteral(const QList<QByteArray> &elements)
{
    QByteArray out = "{";
    for (qsizetype i = 0; i < elements.size(); ++i) {
        if (i > 0) {
            out.append(',');
        }
        out.append('"');
        for (const char c : elements[i]) {
            if (c == '"' || c == '\\') {
                out.append('\\');
            }
            out.append(c);
        }
        out.append('"');
    }
    return out + '}';
}

} // namespace rt::postgres
