#include "shared/api/cluster_snapshot.h"

#include "shared/api/json_reader.h"
#include "shared/core/json_values.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QThreadPool>

namespace rt::api {

namespace {

QJsonValue optionalNumber(const std::optional<double> &value)
{
    return value ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
}

QJsonValue textOrNull(const QString &text)
{
    return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text);
}

QJsonArray writeNodes(const QList<NodeSnapshot> &nodes)
{
    QJsonArray nodesJson;
    for (const NodeSnapshot &node : nodes) {
        QJsonArray workers;
        for (const WorkerSnapshot &worker : node.workers) {
            workers.append(QJsonObject{ { QStringLiteral("cpu"), worker.cpu },
                                        { QStringLiteral("loop_lag_ms"), worker.loopLagMs } });
        }
        QJsonArray history;
        for (const LoadSample &sample : node.loadHistory) {
            history.append(QJsonObject{ { QStringLiteral("at"), double(sample.atMs) },
                                        { QStringLiteral("load"), sample.load } });
        }
        nodesJson.append(QJsonObject{
                { QStringLiteral("id"), node.id },
                { QStringLiteral("region"), node.region },
                { QStringLiteral("client_address"), node.clientAddress },
                { QStringLiteral("link_address"), node.linkAddress },
                { QStringLiteral("started_at"), double(node.startedAtMs) },
                { QStringLiteral("load"), optionalNumber(node.load) },
                { QStringLiteral("load_history"), history },
                { QStringLiteral("connections"), double(node.connections) },
                { QStringLiteral("channels"), double(node.channels) },
                { QStringLiteral("messages_in_per_s"), node.messagesInPerSecond },
                { QStringLiteral("messages_out_per_s"), node.messagesOutPerSecond },
                { QStringLiteral("available"), node.available },
                { QStringLiteral("cpu"), optionalNumber(node.cpu) },
                { QStringLiteral("cpu_count"), double(node.cpuCount) },
                { QStringLiteral("rss_bytes"), double(node.residentBytes) },
                { QStringLiteral("workers"), workers },
        });
    }
    return nodesJson;
}

QJsonArray writeTenants(const QList<TenantPlacement> &tenants)
{
    QJsonArray tenantsJson;
    for (const TenantPlacement &tenant : tenants) {
        QJsonObject users;
        for (auto it = tenant.usersByNode.cbegin(); it != tenant.usersByNode.cend(); ++it) {
            users.insert(it.key(), double(it.value()));
        }
        tenantsJson.append(QJsonObject{
                { QStringLiteral("tenant"), tenant.tenant },
                { QStringLiteral("stream_owner"), textOrNull(tenant.streamOwner) },
                { QStringLiteral("stream_state"), textOrNull(tenant.streamState) },
                { QStringLiteral("users"), users },
        });
    }
    return tenantsJson;
}

QJsonArray writeLinks(const QList<LinkFlow> &links)
{
    QJsonArray linksJson;
    for (const LinkFlow &link : links) {
        linksJson.append(QJsonObject{ { QStringLiteral("from"), link.from },
                                      { QStringLiteral("to"), link.to },
                                      { QStringLiteral("messages_per_s"), link.messagesPerSecond },
                                      { QStringLiteral("bytes_per_s"), link.bytesPerSecond } });
    }
    return linksJson;
}

QJsonArray writeTenantFlows(const QList<TenantFlow> &tenantFlows)
{
    QJsonArray flowsJson;
    for (const TenantFlow &flow : tenantFlows) {
        flowsJson.append(
                QJsonObject{ { QStringLiteral("tenant"), flow.tenant },
                             { QStringLiteral("node"), flow.node },
                             { QStringLiteral("messages_in_per_s"), flow.messagesInPerSecond },
                             { QStringLiteral("messages_out_per_s"), flow.messagesOutPerSecond } });
    }
    return flowsJson;
}

QJsonObject writeConfig(qint64 configRevision, const QList<ConfigValue> &config)
{
    QJsonArray entries;
    for (const ConfigValue &entry : config) {
        entries.append(QJsonObject{
                { QStringLiteral("key"), entry.key },
                { QStringLiteral("value"), QString::fromUtf8(entry.value) },
                { QStringLiteral("revision"), double(entry.modRevision) },
                { QStringLiteral("temporary"), entry.temporary },
                { QStringLiteral("expires_at"),
                  entry.expiresAtMs ? QJsonValue(double(*entry.expiresAtMs)) : QJsonValue() } });
    }
    return QJsonObject{ { QStringLiteral("revision"), double(configRevision) },
                        { QStringLiteral("entries"), entries } };
}

NodeSnapshot readNode(const QJsonObject &item, const QString &path, std::optional<QString> &error)
{
    const JsonReader r(item, path, error);
    NodeSnapshot node;
    r.text("id", node.id);
    r.text("region", node.region);
    r.text("client_address", node.clientAddress);
    r.text("link_address", node.linkAddress);
    r.integer("started_at", node.startedAtMs);
    r.optionalNumber("load", node.load);
    r.objects("load_history", [&](const QJsonObject &sampleJson, const QString &samplePath) {
        const JsonReader s(sampleJson, samplePath, error);
        LoadSample sample;
        s.integer("at", sample.atMs);
        s.number("load", sample.load);
        node.loadHistory.append(sample);
    });
    r.integer("connections", node.connections);
    r.integer("channels", node.channels);
    r.number("messages_in_per_s", node.messagesInPerSecond);
    r.number("messages_out_per_s", node.messagesOutPerSecond);
    r.boolean("available", node.available);
    r.optionalNumber("cpu", node.cpu);
    r.integer("cpu_count", node.cpuCount);
    r.integer("rss_bytes", node.residentBytes);
    r.objects("workers", [&](const QJsonObject &workerJson, const QString &workerPath) {
        const JsonReader w(workerJson, workerPath, error);
        WorkerSnapshot worker;
        w.number("cpu", worker.cpu);
        w.number("loop_lag_ms", worker.loopLagMs);
        node.workers.append(worker);
    });
    if (node.id.isEmpty() && !error) {
        error = path + QStringLiteral(".id must be a non-empty string");
    }
    return node;
}

TenantPlacement readTenant(const QJsonObject &item, const QString &path,
                           std::optional<QString> &error)
{
    const JsonReader r(item, path, error);
    TenantPlacement tenant;
    r.text("tenant", tenant.tenant);
    r.text("stream_owner", tenant.streamOwner);
    r.text("stream_state", tenant.streamState);
    const QJsonObject users = r.object("users");
    for (auto it = users.constBegin(); it != users.constEnd() && !error; ++it) {
        // Exact integers only, like every other count: casting a double outside qint64's range
        // (1e300) to an integer is undefined.
        const std::optional<qint64> count = json::exactInteger(it.value());
        if (!count) {
            error = r.field("users") + u'.' + it.key() + QStringLiteral(" must be an integer");
            break;
        }
        tenant.usersByNode.insert(it.key(), *count);
    }
    if (tenant.tenant.isEmpty() && !error) {
        error = path + QStringLiteral(".tenant must be a non-empty string");
    }
    return tenant;
}

LinkFlow readLink(const QJsonObject &item, const QString &path, std::optional<QString> &error)
{
    const JsonReader r(item, path, error);
    LinkFlow link;
    r.text("from", link.from);
    r.text("to", link.to);
    r.number("messages_per_s", link.messagesPerSecond);
    r.number("bytes_per_s", link.bytesPerSecond);
    return link;
}

TenantFlow readTenantFlow(const QJsonObject &item, const QString &path,
                          std::optional<QString> &error)
{
    const JsonReader r(item, path, error);
    TenantFlow flow;
    r.text("tenant", flow.tenant);
    r.text("node", flow.node);
    r.number("messages_in_per_s", flow.messagesInPerSecond);
    r.number("messages_out_per_s", flow.messagesOutPerSecond);
    return flow;
}

ConfigValue readConfigEntry(const QJsonObject &item, const QString &path,
                            std::optional<QString> &error)
{
    const JsonReader r(item, path, error);
    ConfigValue entry;
    QString value;
    r.text("key", entry.key);
    r.text("value", value);
    entry.value = value.toUtf8();
    r.integer("revision", entry.modRevision);
    r.boolean("temporary", entry.temporary);
    r.optionalInteger("expires_at", entry.expiresAtMs);
    return entry;
}

} // namespace

QJsonObject ClusterSnapshot::toJson() const
{
    return QJsonObject{
        { QStringLiteral("taken_at"), double(takenAtMs) },
        { QStringLiteral("answered_by"), answeredBy },
        { QStringLiteral("available"), available },
        { QStringLiteral("nodes"), writeNodes(nodes) },
        { QStringLiteral("tenants"), writeTenants(tenants) },
        { QStringLiteral("links"), writeLinks(links) },
        { QStringLiteral("tenant_flows"), writeTenantFlows(tenantFlows) },
        { QStringLiteral("config"), writeConfig(configRevision, config) },
    };
}

Result<ClusterSnapshot> ClusterSnapshot::fromJson(const QJsonObject &object)
{
    std::optional<QString> error;
    ClusterSnapshot snapshot;
    const JsonReader top(object, QString(), error);
    top.integer("taken_at", snapshot.takenAtMs);
    top.text("answered_by", snapshot.answeredBy);
    top.boolean("available", snapshot.available);
    top.objects("nodes", [&](const QJsonObject &item, const QString &path) {
        snapshot.nodes.append(readNode(item, path, error));
    });
    top.objects("tenants", [&](const QJsonObject &item, const QString &path) {
        snapshot.tenants.append(readTenant(item, path, error));
    });
    top.objects("links", [&](const QJsonObject &item, const QString &path) {
        snapshot.links.append(readLink(item, path, error));
    });
    top.objects("tenant_flows", [&](const QJsonObject &item, const QString &path) {
        snapshot.tenantFlows.append(readTenantFlow(item, path, error));
    });
    const QJsonObject configJson = top.object("config");
    const JsonReader config(configJson, top.field("config"), error);
    config.integer("revision", snapshot.configRevision);
    config.objects("entries", [&](const QJsonObject &item, const QString &path) {
        snapshot.config.append(readConfigEntry(item, path, error));
    });
    if (error) {
        return Error{ *error };
    }
    return snapshot;
}

Result<ClusterSnapshot> ClusterSnapshot::fromJson(QByteArrayView json)
{
    QJsonParseError parseError{};
    const QJsonDocument document =
            QJsonDocument::fromJson(QByteArray::fromRawData(json.data(), json.size()), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        return Error{ QStringLiteral("the snapshot is not JSON: ") + parseError.errorString() };
    }
    if (!document.isObject()) {
        return Error{ QStringLiteral("the snapshot is not a JSON object") };
    }
    return fromJson(document.object());
}

void releaseInBackground(ClusterSnapshot &&snapshot)
{
    QThreadPool::globalInstance()->start([released = std::move(snapshot)] {});
}

} // namespace rt::api
