// modelSummary(): the JSON the report mode writes next to its screenshots (summary.json) says
// what the models show — nodes, placement, link and tenant flows, configuration keys, tenants,
// the answering node and the connection state — for the recorded snapshots, before any snapshot,
// and after a later snapshot replaced the first (a node gone, a tenant moved, one arrived).
#include "dashboard/app/model_summary.h"
#include "dashboard/models/snapshot_models.h"
#include "shared/api/tenant_summary.h"

#include <QFile>
#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using rt::api::ClusterSnapshot;
using namespace rt::dashboard;

namespace {

QByteArray contents(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        qFatal("cannot read %s", qPrintable(path));
    }
    return file.readAll();
}

ClusterSnapshot recorded(const QString &path)
{
    auto snapshot = ClusterSnapshot::fromJson(contents(path));
    if (!snapshot) {
        qFatal("%s: %s", qPrintable(path), qPrintable(snapshot.error().message));
    }
    return *snapshot;
}

// The cluster at 1796058000000: nodes a, b (us-east-1) and c (eu-west-1); tenants acme, globex.
ClusterSnapshot first()
{
    return recorded(QStringLiteral(RT_API_TEST_DATA "/snapshot-3-nodes.json"));
}

// A minute later: node-b gone, globex moved to node-a, initech arrived on node-c.
ClusterSnapshot later()
{
    return recorded(QStringLiteral(RT_DASHBOARD_TEST_DATA "/snapshot-2-nodes-later.json"));
}

QList<rt::api::TenantSummary> recordedTenants()
{
    auto tenants = rt::api::TenantSummary::listFromJson(
            contents(QStringLiteral(RT_API_TEST_DATA "/tenants-list.json")));
    if (!tenants) {
        qFatal("tenants-list.json: %s", qPrintable(tenants.error().message));
    }
    return *tenants;
}

// Indented text with sorted keys: a failing comparison shows both documents readably.
QString text(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Indented));
}

QString text(const char *json)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(QByteArray(json), &error);
    if (error.error != QJsonParseError::NoError) {
        qFatal("expected JSON: %s", qPrintable(error.errorString()));
    }
    return text(document.object());
}

} // namespace

class TestModelSummary : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void beforeAnySnapshot()
    {
        SnapshotModels models;
        const QString expected = text(R"json({
            "answered_by": null, "taken_at": 0, "connection": "Not connected",
            "nodes": [], "placement": [], "links": [], "tenant_flows": [],
            "config": {"revision": 0, "keys": []}, "tenants": []
        })json");
        QCOMPARE(text(modelSummary(models, u"Not connected"_s)), expected);
    }

    void recordedSnapshot()
    {
        SnapshotModels models;
        models.apply(first());
        models.tenants()->setTenants(recordedTenants());
        const QString expected = text(R"json({
            "answered_by": "node-a", "taken_at": 1796058000000,
            "connection": "Connected to node-a (10.0.0.1:4000)",
            "nodes": [
                {"id": "node-a", "region": "us-east-1", "load": 0.42, "connections": 1200,
                 "channels": 3400, "messages_in_per_s": 120.5, "messages_out_per_s": 9800,
                 "available": true},
                {"id": "node-b", "region": "us-east-1", "load": null, "connections": 3,
                 "channels": 3, "messages_in_per_s": 0, "messages_out_per_s": 12,
                 "available": true},
                {"id": "node-c", "region": "eu-west-1", "load": 2.5, "connections": 50,
                 "channels": 70, "messages_in_per_s": 4, "messages_out_per_s": 40,
                 "available": false}
            ],
            "placement": [
                {"tenant": "acme", "stream_owner": "node-a", "stream_state": "ready",
                 "nodes": ["node-a", "node-b"], "users": {"node-a": 1190, "node-b": 3},
                 "total_users": 1193},
                {"tenant": "globex", "stream_owner": null, "stream_state": null,
                 "nodes": ["node-c"], "users": {"node-c": 50}, "total_users": 50}
            ],
            "links": [
                {"from": "node-a", "to": "node-b", "messages_per_s": 118, "bytes_per_s": 23600},
                {"from": "node-c", "to": "node-a", "messages_per_s": 0.5, "bytes_per_s": 100}
            ],
            "tenant_flows": [
                {"tenant": "acme", "node": "node-a", "messages_in_per_s": 120,
                 "messages_out_per_s": 9790}
            ],
            "config": {"revision": 57, "keys": ["region_mapping", "tenant_limits.acme"]},
            "tenants": ["acme", "globex"]
        })json");
        QCOMPARE(text(modelSummary(models, u"Connected to node-a (10.0.0.1:4000)"_s)), expected);
    }

    // The summary follows the models through an update (it is not a copy of the first picture).
    void laterSnapshot()
    {
        SnapshotModels models;
        models.apply(first());
        models.apply(later());
        const QJsonObject summary = modelSummary(models, u"Connected to node-a"_s);
        QCOMPARE(summary.value(u"taken_at"_s).toInteger(), Q_INT64_C(1796058060000));
        const QString expected = text(R"json({
            "nodes": [
                {"id": "node-a", "region": "us-east-1", "load": 0.55, "connections": 1243,
                 "channels": 3450, "messages_in_per_s": 130, "messages_out_per_s": 9900,
                 "available": true},
                {"id": "node-c", "region": "eu-west-1", "load": 2.1, "connections": 10,
                 "channels": 12, "messages_in_per_s": 4, "messages_out_per_s": 40,
                 "available": true}
            ],
            "placement": [
                {"tenant": "acme", "stream_owner": "node-a", "stream_state": "ready",
                 "nodes": ["node-a"], "users": {"node-a": 1193}, "total_users": 1193},
                {"tenant": "globex", "stream_owner": "node-a", "stream_state": "starting",
                 "nodes": ["node-a"], "users": {"node-a": 50}, "total_users": 50},
                {"tenant": "initech", "stream_owner": "node-c", "stream_state": "ready",
                 "nodes": ["node-c"], "users": {"node-c": 10}, "total_users": 10}
            ],
            "links": [
                {"from": "node-a", "to": "node-c", "messages_per_s": 15, "bytes_per_s": 3000},
                {"from": "node-c", "to": "node-a", "messages_per_s": 2, "bytes_per_s": 400}
            ],
            "tenant_flows": [
                {"tenant": "acme", "node": "node-a", "messages_in_per_s": 125,
                 "messages_out_per_s": 9850},
                {"tenant": "globex", "node": "node-a", "messages_in_per_s": 5,
                 "messages_out_per_s": 50}
            ],
            "config": {"revision": 60, "keys": ["region_mapping", "tenant_limits.globex"]},
            "tenants": []
        })json");
        const QJsonObject shown{ { u"nodes"_s, summary.value(u"nodes"_s) },
                                 { u"placement"_s, summary.value(u"placement"_s) },
                                 { u"links"_s, summary.value(u"links"_s) },
                                 { u"tenant_flows"_s, summary.value(u"tenant_flows"_s) },
                                 { u"config"_s, summary.value(u"config"_s) },
                                 { u"tenants"_s, summary.value(u"tenants"_s) } };
        QCOMPARE(text(shown), expected);
    }
};

QTEST_GUILESS_MAIN(TestModelSummary)
#include "tst_model_summary.moc"
