#pragma once

#include "shared/core/result.h"

#include <QByteArrayView>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <limits>
#include <optional>

// Reading numbers and objects out of untrusted JSON, the same way in every module. JSON numbers
// are doubles: an integer is only exact up to 2^53, so larger ones, fractions, NaN and infinity
// are not integers here. Pure functions; any thread.
namespace rt::json {

inline constexpr qint64 MaxExactInteger = qint64(1) << 53;

// `value` as an integer in [min, max] (2.0 is 2); nullopt for anything else (other types too).
std::optional<qint64> integerIn(const QJsonValue &value, qint64 min, qint64 max);

inline std::optional<qint64> exactInteger(const QJsonValue &value)
{
    return integerIn(value, -MaxExactInteger, MaxExactInteger);
}

inline std::optional<qint64> nonNegativeInteger(const QJsonValue &value)
{
    return integerIn(value, 0, MaxExactInteger);
}

inline std::optional<int> positiveInt(const QJsonValue &value)
{
    const std::optional<qint64> number = integerIn(value, 1, std::numeric_limits<int>::max());
    return number ? std::optional<int>(int(*number)) : std::nullopt;
}

struct ObjectError
{
    enum class Kind {
        Syntax, // not JSON at all; `message` says where
        NotObject, // valid JSON of another type; callers say what they expected
    };
    Kind kind = Kind::Syntax;
    QString message; // Syntax: "not valid JSON: <reason> at offset <n>"
};

// `text` parsed as a JSON object.
Result<QJsonObject, ObjectError> parseObject(QByteArrayView text);

} // namespace rt::json
