#include "shared/api/node_history.h"

#include "shared/api/json_reader.h"
#include "shared/core/json_values.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <array>

namespace rt::api {

namespace {

// The order of a sample's fields in its JSON array; the one place it is written down.
constexpr std::array<const char *, 9> Columns{
    "at",
    "cpu",
    "rss_bytes",
    "connections",
    "channels",
    "messages_in_per_s",
    "messages_out_per_s",
    "loop_lag_ms",
    "load",
};

QJsonArray writeSample(const NodeSample &sample)
{
    return QJsonArray{ double(sample.atMs),
                       sample.cpuCores,
                       double(sample.residentBytes),
                       double(sample.connections),
                       double(sample.channels),
                       sample.messagesInPerSecond,
                       sample.messagesOutPerSecond,
                       sample.loopLagMs,
                       sample.load ? QJsonValue(*sample.load) : QJsonValue(QJsonValue::Null) };
}

// A sample's array, or why it is not one.
Result<NodeSample> readSample(const QJsonValue &value, const QString &path)
{
    const QJsonArray row = value.toArray();
    if (!value.isArray() || row.size() != qsizetype(Columns.size())) {
        return Error{ path
                      + QStringLiteral(" must be an array of %1 numbers").arg(Columns.size()) };
    }
    const auto wrong = [&path](qsizetype i, const char *what) {
        return Error{ path + u'[' + QString::number(i) + QStringLiteral("] (")
                      + QLatin1String(Columns[std::size_t(i)]) + QStringLiteral(") must be ")
                      + QLatin1String(what) };
    };
    std::array<qint64, 5> counts{}; // indices 0, 2, 3, 4: at, rss, connections, channels
    constexpr std::array<qsizetype, 4> IntegerColumns{ 0, 2, 3, 4 };
    for (const qsizetype i : IntegerColumns) {
        const std::optional<qint64> integer = json::exactInteger(row.at(i));
        if (!integer || (i != 0 && *integer < 0)) {
            return wrong(i, i == 0 ? "an integer" : "a non-negative integer");
        }
        counts[std::size_t(i)] = *integer;
    }
    constexpr std::array<qsizetype, 4> NumberColumns{ 1, 5, 6, 7 };
    for (const qsizetype i : NumberColumns) {
        if (!row.at(i).isDouble() || row.at(i).toDouble() < 0) {
            return wrong(i, "a non-negative number");
        }
    }
    const QJsonValue load = row.at(8);
    if (!load.isNull() && !load.isDouble()) {
        return wrong(8, "a number or null");
    }
    return NodeSample{ counts[0],
                       row.at(1).toDouble(),
                       counts[2],
                       counts[3],
                       counts[4],
                       row.at(5).toDouble(),
                       row.at(6).toDouble(),
                       row.at(7).toDouble(),
                       load.isNull() ? std::nullopt : std::optional<double>(load.toDouble()) };
}

} // namespace

QJsonObject ClusterHistory::toJson() const
{
    QJsonArray columns;
    for (const char *column : Columns) {
        columns.append(QLatin1String(column));
    }
    QJsonArray nodesJson;
    for (const NodeHistory &node : nodes) {
        QJsonArray samples;
        for (const NodeSample &sample : node.samples) {
            samples.append(writeSample(sample));
        }
        nodesJson.append(QJsonObject{ { QStringLiteral("id"), node.id },
                                      { QStringLiteral("samples"), samples } });
    }
    return QJsonObject{ { QStringLiteral("taken_at"), double(takenAtMs) },
                        { QStringLiteral("answered_by"), answeredBy },
                        { QStringLiteral("interval_ms"), double(intervalMs) },
                        { QStringLiteral("columns"), columns },
                        { QStringLiteral("nodes"), nodesJson } };
}

Result<ClusterHistory> ClusterHistory::fromJson(const QJsonObject &object)
{
    std::optional<QString> error;
    ClusterHistory history;
    const JsonReader top(object, QString(), error);
    top.integer("taken_at", history.takenAtMs);
    top.text("answered_by", history.answeredBy);
    top.integer("interval_ms", history.intervalMs);
    top.objects("nodes", [&](const QJsonObject &item, const QString &path) {
        const JsonReader r(item, path, error);
        NodeHistory node;
        r.text("id", node.id);
        const QJsonValue samples = item.value(QLatin1String("samples"));
        if (!samples.isUndefined() && !samples.isNull() && !samples.isArray()) {
            error = r.field("samples") + QStringLiteral(" must be an array");
        }
        const QJsonArray rows = samples.toArray();
        for (qsizetype i = 0; i < rows.size() && !error; ++i) {
            Result<NodeSample> sample =
                    readSample(rows.at(i), r.field("samples") + u'[' + QString::number(i) + u']');
            if (!sample) {
                error = sample.error().message;
                break;
            }
            node.samples.append(*sample);
        }
        if (node.id.isEmpty() && !error) {
            error = path + QStringLiteral(".id must be a non-empty string");
        }
        history.nodes.append(std::move(node));
    });
    if (error) {
        return Error{ *error };
    }
    return history;
}

Result<ClusterHistory> ClusterHistory::fromJson(QByteArrayView json)
{
    QJsonParseError parseError{};
    const QJsonDocument document =
            QJsonDocument::fromJson(QByteArray::fromRawData(json.data(), json.size()), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        return Error{ QStringLiteral("the history is not JSON: ") + parseError.errorString() };
    }
    if (!document.isObject()) {
        return Error{ QStringLiteral("the history is not a JSON object") };
    }
    return fromJson(document.object());
}

} // namespace rt::api
