#include "dashboard/api/json_reader.h"

#include <QJsonDocument>
#include <QJsonParseError>

#include <cmath>

namespace rt::dashboard {

namespace {

// JSON numbers are doubles: integers beyond 2^53 are not exact.
constexpr double MaxExactInteger = 9007199254740992.0;

} // namespace

JsonReader::JsonReader(const QJsonObject &object, QString path, std::optional<QString> &error)
    : m_object(object),
      m_path(std::move(path)),
      m_error(error)
{ }

bool JsonReader::has(const char *key) const
{
    return m_object.contains(QLatin1String(key));
}

void JsonReader::text(const char *key, QString &out) const
{
    const QJsonValue value = m_object.value(QLatin1String(key));
    if (value.isUndefined() || value.isNull()) {
        return;
    }
    if (!value.isString()) {
        fail(key, "a string");
        return;
    }
    out = value.toString();
}

void JsonReader::integer(const char *key, qint64 &out) const
{
    std::optional<qint64> parsed = out;
    const QJsonValue value = m_object.value(QLatin1String(key));
    if (value.isNull()) {
        fail(key, "an integer");
        return;
    }
    optionalInteger(key, parsed);
    if (parsed) {
        out = *parsed;
    }
}

void JsonReader::optionalInteger(const char *key, std::optional<qint64> &out) const
{
    const QJsonValue value = m_object.value(QLatin1String(key));
    if (value.isUndefined()) {
        return;
    }
    if (value.isNull()) {
        out.reset();
        return;
    }
    const double number = value.toDouble();
    if (!value.isDouble() || !std::isfinite(number) || std::floor(number) != number
        || std::fabs(number) > MaxExactInteger) {
        fail(key, "an integer");
        return;
    }
    out = static_cast<qint64>(number);
}

void JsonReader::boolean(const char *key, bool &out) const
{
    const QJsonValue value = m_object.value(QLatin1String(key));
    if (value.isUndefined()) {
        return;
    }
    if (!value.isBool()) {
        fail(key, "a boolean");
        return;
    }
    out = value.toBool();
}

void JsonReader::optionalBoolean(const char *key, std::optional<bool> &out) const
{
    const QJsonValue value = m_object.value(QLatin1String(key));
    if (value.isUndefined()) {
        return;
    }
    if (value.isNull()) {
        out.reset();
        return;
    }
    if (!value.isBool()) {
        fail(key, "a boolean or null");
        return;
    }
    out = value.toBool();
}

void JsonReader::jsonText(const char *key, QByteArray &out) const
{
    const QJsonValue value = m_object.value(QLatin1String(key));
    if (!value.isUndefined()) {
        out = jsonValueText(value);
    }
}

QJsonObject JsonReader::object(const char *key) const
{
    const QJsonValue value = m_object.value(QLatin1String(key));
    if (value.isUndefined() || value.isNull()) {
        return {};
    }
    if (!value.isObject()) {
        fail(key, "an object");
        return {};
    }
    return value.toObject();
}

QString JsonReader::field(const char *key) const
{
    return m_path.isEmpty() ? QString(QLatin1String(key))
                            : QString(m_path + u'.' + QLatin1String(key));
}

void JsonReader::fail(const char *key, const char *expected) const
{
    if (!m_error) {
        m_error = field(key) + QStringLiteral(" must be ") + QLatin1String(expected);
    }
}

QByteArray jsonValueText(const QJsonValue &value)
{
    if (value.isObject()) {
        return QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact);
    }
    if (value.isArray()) {
        return QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact);
    }
    const QByteArray wrapped = QJsonDocument(QJsonArray{ value }).toJson(QJsonDocument::Compact);
    return wrapped.mid(1, wrapped.size() - 2); // "[...]" -> "..."
}

std::optional<QJsonValue> parseJsonValue(const QByteArray &text, QString *why)
{
    // QJsonDocument reads only objects and arrays: a scalar is read as a one-element array.
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson('[' + text + ']', &error);
    if (error.error != QJsonParseError::NoError || !document.isArray()
        || document.array().size() != 1) {
        if (why) {
            if (error.error != QJsonParseError::NoError) {
                *why = error.errorString();
            } else {
                *why = document.array().isEmpty() ? QStringLiteral("no value")
                                                  : QStringLiteral("more than one value");
            }
        }
        return std::nullopt;
    }
    return document.array().at(0);
}

} // namespace rt::dashboard
