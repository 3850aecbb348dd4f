#include "server/subscriptions/pg_input.h"

#include <QByteArray>

namespace rt::subscriptions::pg {

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (year 0 = 1 BC).
qint64 daysFromCivil(qint64 year, int month, int day)
{
    year -= month <= 2 ? 1 : 0;
    const qint64 era = (year >= 0 ? year : year - 399) / 400;
    const qint64 yearOfEra = year - era * 400;
    const qint64 dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    const qint64 dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear;
    return era * 146097 + dayOfEra - 719468;
}

bool isLeap(qint64 year)
{
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int daysInMonth(qint64 year, int month)
{
    static constexpr int Days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return month == 2 && isLeap(year) ? 29 : Days[month - 1];
}

class Scanner
{
public:
    explicit Scanner(QByteArrayView text) : m_text(text) { }
    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek() const { return atEnd() ? '\0' : m_text[m_pos]; }
    bool take(char c)
    {
        if (peek() == c) {
            ++m_pos;
            return true;
        }
        return false;
    }
    // Up to maxDigits decimal digits; nullopt if there is none.
    std::optional<qint64> number(int minDigits, int maxDigits, int *count = nullptr)
    {
        qint64 value = 0;
        int digits = 0;
        while (digits < maxDigits && !atEnd() && peek() >= '0' && peek() <= '9') {
            value = value * 10 + (peek() - '0');
            ++m_pos;
            ++digits;
        }
        if (count) {
            *count = digits;
        }
        if (digits < minDigits) {
            return std::nullopt;
        }
        return value;
    }
    void skipSpace()
    {
        while (!atEnd() && isSpace(peek())) {
            ++m_pos;
        }
    }
    QByteArrayView rest() const { return m_text.sliced(m_pos); }

private:
    QByteArrayView m_text;
    qsizetype m_pos = 0;
};

// HH:MM[:SS[.ffffff]] → microseconds since midnight (24:00:00 allowed, as in PostgreSQL).
std::optional<qint64> scanTime(Scanner &scan)
{
    const auto hour = scan.number(1, 2);
    if (!hour || !scan.take(':')) {
        return std::nullopt;
    }
    const auto minute = scan.number(2, 2);
    if (!minute) {
        return std::nullopt;
    }
    qint64 second = 0;
    qint64 micros = 0;
    if (scan.take(':')) {
        const auto parsed = scan.number(2, 2);
        if (!parsed) {
            return std::nullopt;
        }
        second = *parsed;
        if (scan.take('.')) {
            int digits = 0;
            qint64 fraction = 0;
            while (!scan.atEnd() && scan.peek() >= '0' && scan.peek() <= '9') {
                if (digits < 7) {
                    fraction = fraction * 10 + (scan.peek() - '0');
                }
                ++digits;
                scan.take(scan.peek());
            }
            if (digits == 0) {
                return std::nullopt;
            }
            // Round to microseconds like PostgreSQL (half away from zero on the 7th digit).
            for (int d = std::min(digits, 7); d < 7; ++d) {
                fraction *= 10;
            }
            micros = (fraction + 5) / 10;
        }
    }
    if (*hour > 24 || *minute > 59 || second > 60
        || (*hour == 24 && (*minute != 0 || second != 0 || micros != 0))) {
        return std::nullopt;
    }
    return ((*hour * 60 + *minute) * 60 + second) * MicrosPerSecond + micros;
}

// Z | +HH | +HH:MM | +HHMM | +HH:MM:SS → seconds east of UTC.
std::optional<qint64> scanOffset(Scanner &scan)
{
    if (scan.take('Z') || scan.take('z')) {
        return 0;
    }
    const char sign = scan.peek();
    if (sign != '+' && sign != '-') {
        return std::nullopt;
    }
    scan.take(sign);
    int digits = 0;
    const auto first = scan.number(1, 4, &digits);
    if (!first) {
        return std::nullopt;
    }
    qint64 hours = *first;
    qint64 minutes = 0;
    qint64 seconds = 0;
    if (digits > 2) {
        hours = *first / 100;
        minutes = *first % 100;
    } else if (scan.take(':')) {
        const auto m = scan.number(2, 2);
        if (!m) {
            return std::nullopt;
        }
        minutes = *m;
        if (scan.take(':')) {
            const auto s = scan.number(2, 2);
            if (!s) {
                return std::nullopt;
            }
            seconds = *s;
        }
    }
    if (hours > 15 || minutes > 59 || seconds > 59) {
        return std::nullopt;
    }
    const qint64 offset = (hours * 60 + minutes) * 60 + seconds;
    return sign == '-' ? -offset : offset;
}

// infinity, -infinity and epoch (case-insensitive); nullopt for anything else.
std::optional<qint64> specialDateTime(QByteArrayView text)
{
    if (equalsIgnoreCase(text, "infinity") || equalsIgnoreCase(text, "+infinity")) {
        return PlusInfinity;
    }
    if (equalsIgnoreCase(text, "-infinity")) {
        return MinusInfinity;
    }
    if (equalsIgnoreCase(text, "epoch")) {
        return 0;
    }
    return std::nullopt;
}

// The fields of YYYY-MM-DD as written (four to seven year digits), not yet checked.
struct DateFields
{
    qint64 year = 0;
    qint64 month = 0;
    qint64 day = 0;
};

std::optional<DateFields> scanDate(Scanner &scan)
{
    int yearDigits = 0;
    const auto year = scan.number(1, 7, &yearDigits);
    if (!year || yearDigits < 4 || !scan.take('-')) {
        return std::nullopt;
    }
    const auto month = scan.number(1, 2);
    if (!month || !scan.take('-')) {
        return std::nullopt;
    }
    const auto day = scan.number(1, 2);
    if (!day) {
        return std::nullopt;
    }
    return DateFields{ *year, *month, *day };
}

struct TimeFields
{
    qint64 timeOfDay = 0; // microseconds since midnight
    std::optional<qint64> offset; // seconds east of UTC, if written
};

// What may follow the date: T or a space, then optionally a time and its UTC offset.
std::optional<TimeFields> scanTimeAndOffset(Scanner &scan)
{
    TimeFields fields;
    if (scan.take('T') || scan.take('t') || (scan.peek() == ' ')) {
        scan.skipSpace();
        if (!scan.atEnd() && scan.peek() >= '0' && scan.peek() <= '9') {
            const auto time = scanTime(scan);
            if (!time) {
                return std::nullopt;
            }
            fields.timeOfDay = *time;
            scan.skipSpace();
            if (scan.peek() == '+' || scan.peek() == '-' || scan.peek() == 'Z'
                || scan.peek() == 'z') {
                fields.offset = scanOffset(scan);
                if (!fields.offset) {
                    return std::nullopt;
                }
            }
        }
    }
    return fields;
}

// The date and time in microseconds since 1970-01-01 (`fullYear` proleptic); nullopt when that
// leaves 64 bits.
std::optional<qint64> toMicros(qint64 fullYear, const DateFields &date, const TimeFields &time,
                               DateTimeKind kind)
{
    // Seven-digit years reach past what microseconds in 64 bits hold (about 292,000 years from
    // 1970; PostgreSQL's timestamps end in 294276): such a value is out of range, not a wrap.
    qint64 micros = 0;
    if (__builtin_mul_overflow(daysFromCivil(fullYear, int(date.month), int(date.day)),
                               MicrosPerDay, &micros)) {
        return std::nullopt;
    }
    if (kind == DateTimeKind::Date) {
        return micros; // the time of day and zone are ignored by date_in
    }
    const qint64 zone =
            kind == DateTimeKind::TimestampTz && time.offset ? *time.offset * MicrosPerSecond : 0;
    if (__builtin_add_overflow(micros, time.timeOfDay, &micros)
        || __builtin_sub_overflow(micros, zone, &micros)) {
        return std::nullopt;
    }
    return micros;
}

} // namespace

// → microseconds since 1970-01-01 (UTC for timestamptz, wall clock otherwise); dates → midnight.
std::optional<qint64> parseDateTime(QByteArrayView text, DateTimeKind kind)
{
    text = trimmed(text);
    if (const std::optional<qint64> special = specialDateTime(text)) {
        return special;
    }
    Scanner scan(text);
    const std::optional<DateFields> date = scanDate(scan);
    if (!date) {
        return std::nullopt;
    }
    const std::optional<TimeFields> time = scanTimeAndOffset(scan);
    if (!time) {
        return std::nullopt;
    }
    scan.skipSpace();
    qint64 fullYear = date->year;
    if (equalsIgnoreCase(scan.rest(), "bc")) {
        fullYear = 1 - fullYear;
    } else if (!scan.atEnd()) {
        return std::nullopt;
    }
    if (date->year == 0 || date->month < 1 || date->month > 12 || date->day < 1
        || date->day > daysInMonth(fullYear, int(date->month))) {
        return std::nullopt;
    }
    return toMicros(fullYear, *date, *time, kind);
}

std::optional<qint64> parseTimeOfDay(QByteArrayView text)
{
    Scanner scan(trimmed(text));
    const auto time = scanTime(scan);
    if (!time || !scan.atEnd()) {
        return std::nullopt;
    }
    return time;
}

} // namespace rt::subscriptions::pg
