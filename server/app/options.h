#pragma once

#include "server/app/config.h"

#include <QCommandLineParser>
#include <QHash>
#include <QHostAddress>
#include <QString>

#include <optional>
#include <span>

// The option table (options.cpp) and how its rows read the command line and the environment:
// internal to server/app (config.cpp runs the rows and renders --help, README's table and the
// packaged environment file from them).
namespace rt::app::options {

class Reader;
struct OptionSpec;
// Reads one option into the configuration; it may check the value and fail through the reader.
using ApplyOption = void (*)(Reader &read, const OptionSpec &option, ServerConfig &config);

// One option, the only place that says what it is: its flag, its environment variable, what it
// means, its default and how it is read. --help, --check-config, the README's table and the
// packaged environment file all come from this table (tests keep the last two in step).
struct OptionSpec
{
    const char *flag;
    const char *env;
    const char *valueName;
    const char *description;
    const char *defaultText;
    ApplyOption apply; // null: read together with another option (see readControlPlane)
};

class Reader
{
public:
    Reader(const QCommandLineParser &parser, const QHash<QString, QString> &environment)
        : m_parser(parser),
          m_environment(environment)
    { }

    // The raw value: flag, then environment, then default.
    QString text(const OptionSpec &spec) const
    {
        const QString flag = QString::fromLatin1(spec.flag);
        if (m_parser.isSet(flag)) {
            return m_parser.value(flag);
        }
        const auto it = m_environment.constFind(QString::fromLatin1(spec.env));
        if (it != m_environment.constEnd() && !it->isEmpty()) {
            return *it;
        }
        return QString::fromLatin1(spec.defaultText);
    }

    bool isGiven(const OptionSpec &spec) const
    {
        const auto it = m_environment.constFind(QString::fromLatin1(spec.env));
        return m_parser.isSet(QString::fromLatin1(spec.flag))
                || (it != m_environment.constEnd() && !it->isEmpty());
    }

    std::optional<QString> error;

    // One of `choices` (compared trimmed and in lower case), else an error listing them.
    QString choice(const OptionSpec &spec, const QStringList &choices)
    {
        QString value = text(spec).trimmed().toLower();
        if (!choices.contains(value)) {
            fail(spec, value,
                 choices.size() < 2 ? choices.value(0)
                                    : choices.mid(0, choices.size() - 1).join(QStringLiteral(", "))
                                 + QStringLiteral(" or ") + choices.constLast());
        }
        return value;
    }

    // An IPv4 or IPv6 address; with emptyMeansNone, no text gives the null address.
    QHostAddress address(const OptionSpec &spec, bool emptyMeansNone = false)
    {
        const QString value = text(spec).trimmed();
        QHostAddress address;
        if ((value.isEmpty() && emptyMeansNone) || address.setAddress(value)) {
            return address;
        }
        fail(spec, value, QStringLiteral("an IPv4 or IPv6 address"));
        return {};
    }

    int integer(const OptionSpec &spec, int minimum, int maximum)
    {
        const QString value = text(spec);
        bool ok = false;
        const int number = value.trimmed().toInt(&ok);
        if (!ok || number < minimum || number > maximum) {
            fail(spec, value, QStringLiteral("an integer from %1 to %2").arg(minimum).arg(maximum));
            return minimum;
        }
        return number;
    }

    bool boolean(const OptionSpec &spec)
    {
        const QString value = text(spec).trimmed().toLower();
        if (value == QLatin1String("true") || value == QLatin1String("1")
            || value == QLatin1String("yes") || value == QLatin1String("on")) {
            return true;
        }
        if (value == QLatin1String("false") || value == QLatin1String("0")
            || value == QLatin1String("no") || value == QLatin1String("off") || value.isEmpty()) {
            return false;
        }
        fail(spec, text(spec), QStringLiteral("true or false"));
        return false;
    }

    void fail(const OptionSpec &spec, const QString &value, const QString &expected)
    {
        if (!error) {
            error = QStringLiteral("invalid %1 (--%2): \"%3\"; expected %4")
                            .arg(QString::fromLatin1(spec.env), QString::fromLatin1(spec.flag),
                                 value, expected);
        }
    }

private:
    const QCommandLineParser &m_parser;
    const QHash<QString, QString> &m_environment;
};

// Where the environment file and the README's table start a new group of options.
struct OptionSection
{
    const char *title;
    const char *firstFlag;
};

// Every option, in the order --help, README and the environment file list them.
std::span<const OptionSpec> all();
// The row of `flag` (which must be in the table).
const OptionSpec &spec(const char *flag);
// The title of the section that `option` starts, or null.
const char *sectionStartingAt(const OptionSpec &option);

} // namespace rt::app::options
