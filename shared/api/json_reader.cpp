#include "shared/api/json_reader.h"

#include "shared/core/json_values.h"

#include <QJsonDocument>
#include <QJsonParseError>

#include <utility>

namespace rt::api {

JsonReader::JsonReader(QJsonObject object, QString path, std::optional<QString> &error)
    : m_object(std::move(object)),
      m_path(std::move(path)),
      m_error(error)
{ }

bool JsonReader::has(const char *key) const
{
    return m_object.contains(QLatin1String(key));
}

namespace {

// Converters from a present, non-null value: nullopt when it has the wrong type.
std::optional<QString> asString(const QJsonValue &value)
{
    return value.isString() ? std::optional(value.toString()) : std::nullopt;
}

std::optional<double> asNumber(const QJsonValue &value)
{
    return value.isDouble() ? std::optional(value.toDouble()) : std::nullopt;
}

std::optional<bool> asBoolean(const QJsonValue &value)
{
    return value.isBool() ? std::optional(value.toBool()) : std::nullopt;
}

} // namespace

template <typename T, typename Convert>
void JsonReader::read(const char *key, T &out, Convert convert, const char *expected) const
{
    const QJsonValue value = m_object.value(QLatin1String(key));
    if (value.isUndefined()) {
        return;
    }
    if (const std::optional<T> converted = convert(value)) {
        out = *converted;
    } else {
        fail(key, expected);
    }
}

template <typename T, typename Convert>
void JsonReader::readOptional(const char *key, std::optional<T> &out, Convert convert,
                              const char *expectedOrNull) const
{
    const QJsonValue value = m_object.value(QLatin1String(key));
    if (value.isUndefined()) {
        return;
    }
    if (value.isNull()) {
        out.reset();
    } else if (std::optional<T> converted = convert(value)) {
        out = std::move(converted);
    } else {
        fail(key, expectedOrNull);
    }
}

void JsonReader::text(const char *key, QString &out) const
{
    if (m_object.value(QLatin1String(key)).isNull()) {
        return; // null text is absent text
    }
    read(key, out, &asString, "a string");
}

void JsonReader::optionalText(const char *key, std::optional<QString> &out) const
{
    readOptional(key, out, &asString, "a string or null");
}

void JsonReader::number(const char *key, double &out) const
{
    read(key, out, &asNumber, "a number");
}

void JsonReader::optionalNumber(const char *key, std::optional<double> &out) const
{
    readOptional(key, out, &asNumber, "a number or null");
}

void JsonReader::integer(const char *key, qint64 &out) const
{
    read(key, out, &json::exactInteger, "an integer");
}

void JsonReader::optionalInteger(const char *key, std::optional<qint64> &out) const
{
    readOptional(key, out, &json::exactInteger, "an integer or null");
}

void JsonReader::boolean(const char *key, bool &out) const
{
    read(key, out, &asBoolean, "a boolean");
}

void JsonReader::optionalBoolean(const char *key, std::optional<bool> &out) const
{
    readOptional(key, out, &asBoolean, "a boolean or null");
}

void JsonReader::timestamp(const char *key, QDateTime &out) const
{
    QString text;
    this->text(key, text);
    if (text.isEmpty()) {
        return;
    }
    // Date and time apart: read as one, they would be a local time, which a DST gap can make
    // invalid.
    const QDate date = text.size() == 19 && text.at(10) == u'T'
            ? QDate::fromString(text.first(10), QStringLiteral("yyyy-MM-dd"))
            : QDate();
    const QTime time = QTime::fromString(text.sliced(std::min<qsizetype>(11, text.size())),
                                         QStringLiteral("HH:mm:ss"));
    if (!date.isValid() || !time.isValid()) {
        fail(key, "a date and time (YYYY-MM-DDTHH:MM:SS)");
        return;
    }
    out = QDateTime(date, time, Qt::UTC);
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

} // namespace rt::api
