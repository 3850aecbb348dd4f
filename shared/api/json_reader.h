#pragma once

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace rt::api {

// Reads typed fields off an untrusted JSON object (the admin and tenant APIs' answers, cluster
// snapshots), remembering the first problem with the field's path ("data[3].max_concurrent_users
// must be an integer"). Lenient about absence, strict about types: an absent field keeps the
// caller's default, a field of the wrong type is the error; null is "absent" for text, objects
// and arrays, "none" for the optional readers, and wrong for the rest. Integers must be exact
// (integral, within 2^53). Not translated: the path and the expected type are the wire's words;
// callers wrap them in a translated sentence. Used by shared/api's DTOs and the dashboard.
class JsonReader
{
public:
    JsonReader(QJsonObject object, QString path, std::optional<QString> &error);

    bool has(const char *key) const;
    void text(const char *key, QString &out) const;
    void optionalText(const char *key, std::optional<QString> &out) const;
    void number(const char *key, double &out) const;
    void optionalNumber(const char *key, std::optional<double> &out) const;
    void integer(const char *key, qint64 &out) const;
    void optionalInteger(const char *key, std::optional<qint64> &out) const;
    void boolean(const char *key, bool &out) const;
    void optionalBoolean(const char *key, std::optional<bool> &out) const;
    // "YYYY-MM-DDTHH:MM:SS" in UTC (the tenant API's timestamps).
    void timestamp(const char *key, QDateTime &out) const;
    // The value itself as compact JSON text (any JSON value; absent: unchanged).
    void jsonText(const char *key, QByteArray &out) const;
    QJsonObject object(const char *key) const; // absent or wrong type (error): {}
    // Calls each(object, path) for every element, which must be an object.
    template <typename Each>
    void objects(const char *key, Each each) const
    {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (value.isUndefined() || value.isNull()) {
            return;
        }
        if (!value.isArray()) {
            fail(key, "an array");
            return;
        }
        const QJsonArray array = value.toArray();
        for (qsizetype i = 0; i < array.size() && !m_error; ++i) {
            const QString path = field(key) + u'[' + QString::number(i) + u']';
            if (!array.at(i).isObject()) {
                m_error = path + QStringLiteral(" must be an object");
                return;
            }
            each(array.at(i).toObject(), path);
        }
    }
    QString field(const char *key) const;
    bool failed() const { return m_error.has_value(); }

private:
    // Absent: `out` unchanged; otherwise convert(value) (nullopt: the wrong type, an error
    // naming `expected`). readOptional() also takes null, as "none".
    template <typename T, typename Convert>
    void read(const char *key, T &out, Convert convert, const char *expected) const;
    template <typename T, typename Convert>
    void readOptional(const char *key, std::optional<T> &out, Convert convert,
                      const char *expectedOrNull) const;
    void fail(const char *key, const char *expected) const;

    QJsonObject m_object;
    QString m_path;
    std::optional<QString> &m_error;
};

// A JSON value as compact text (QJsonDocument only writes objects and arrays).
QByteArray jsonValueText(const QJsonValue &value);
// JSON text of any value (scalars too) parsed; nullopt: not JSON.
std::optional<QJsonValue> parseJsonValue(const QByteArray &text, QString *why = nullptr);

} // namespace rt::api
