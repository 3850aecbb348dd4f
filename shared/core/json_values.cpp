#include "shared/core/json_values.h"

#include <QJsonDocument>
#include <QJsonParseError>

#include <cmath>

namespace rt::json {

std::optional<qint64> integerIn(const QJsonValue &value, qint64 min, qint64 max)
{
    if (!value.isDouble()) {
        return std::nullopt;
    }
    const double number = value.toDouble();
    if (!std::isfinite(number) || std::floor(number) != number || number < double(min)
        || number > double(max)) {
        return std::nullopt;
    }
    return static_cast<qint64>(number);
}

Result<QJsonObject, ObjectError> parseObject(QByteArrayView text)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(text.toByteArray(), &error);
    if (error.error != QJsonParseError::NoError) {
        return ObjectError{ ObjectError::Kind::Syntax,
                            QStringLiteral("not valid JSON: %1 at offset %2")
                                    .arg(error.errorString())
                                    .arg(error.offset) };
    }
    if (!document.isObject()) {
        return ObjectError{ ObjectError::Kind::NotObject, QStringLiteral("not a JSON object") };
    }
    return document.object();
}

} // namespace rt::json
