#pragma once

#include <QByteArrayView>

#include <limits>
#include <optional>

// What the input functions of PostgreSQL's types (int4in, numeric_in, date_in, ...) share here:
// the white space they skip, case-insensitive keywords, and the date/time readers. Internal to
// server/subscriptions (pg_scalar.cpp and pg_datetime.cpp); pure, any thread.
namespace rt::subscriptions::pg {

// ---- Small text helpers (PostgreSQL's input functions skip this white space)

inline bool isSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

inline QByteArrayView trimmed(QByteArrayView text)
{
    qsizetype begin = 0;
    qsizetype end = text.size();
    while (begin < end && isSpace(text[begin])) {
        ++begin;
    }
    while (end > begin && isSpace(text[end - 1])) {
        --end;
    }
    return text.sliced(begin, end - begin);
}

inline bool equalsIgnoreCase(QByteArrayView a, const char *b)
{
    const QByteArrayView other(b);
    if (a.size() != other.size()) {
        return false;
    }
    for (qsizetype i = 0; i < a.size(); ++i) {
        const char x = a[i];
        const char lower = (x >= 'A' && x <= 'Z') ? char(x - 'A' + 'a') : x;
        if (lower != other[i]) {
            return false;
        }
    }
    return true;
}

template <typename T>
inline int threeWay(const T &a, const T &b)
{
    return a < b ? -1 : (b < a ? 1 : 0);
}

// ---- date / time / timestamp / timestamptz (pg_datetime.cpp)

inline constexpr qint64 MicrosPerSecond = 1'000'000;
inline constexpr qint64 MicrosPerDay = 86'400 * MicrosPerSecond;
inline constexpr qint64 PlusInfinity = std::numeric_limits<qint64>::max();
inline constexpr qint64 MinusInfinity = std::numeric_limits<qint64>::min();

enum class DateTimeKind { Date, Timestamp, TimestampTz };

// -> microseconds since 1970-01-01 (UTC for timestamptz, wall clock otherwise); dates ->
// midnight; nullopt when the text is not one, or out of range.
std::optional<qint64> parseDateTime(QByteArrayView text, DateTimeKind kind);
// A time of day -> microseconds since midnight.
std::optional<qint64> parseTimeOfDay(QByteArrayView text);

} // namespace rt::subscriptions::pg
