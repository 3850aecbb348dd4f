#include "dashboard/app/model_summary.h"

#include "dashboard/models/snapshot_models.h"

#include <QJsonArray>
#include <QJsonValue>

namespace rt::dashboard {

namespace {

QVariant value(const QAbstractItemModel &model, int row, int column, int role)
{
    return model.index(row, column).data(role);
}

// A number as JSON; an invalid QVariant ("no data") as null.
QJsonValue number(const QVariant &v)
{
    return v.isValid() ? QJsonValue(v.toDouble()) : QJsonValue(QJsonValue::Null);
}

QJsonValue textOrNull(const QString &text)
{
    return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text);
}

QJsonArray nodesOf(const NodesModel &model)
{
    QJsonArray nodes;
    for (int row = 0; row < model.rowCount(); ++row) {
        const auto sortValue = [&](int column) {
            return value(model, row, column, KeyedTableModel::SortRole);
        };
        nodes.append(QJsonObject{
                { QStringLiteral("id"), value(model, row, 0, KeyedTableModel::KeyRole).toString() },
                { QStringLiteral("region"),
                  value(model, row, 0, NodesModel::RegionRole).toString() },
                { QStringLiteral("load"), number(value(model, row, 0, NodesModel::LoadRole)) },
                { QStringLiteral("connections"),
                  sortValue(NodesModel::ConnectionsColumn).toLongLong() },
                { QStringLiteral("channels"), sortValue(NodesModel::ChannelsColumn).toLongLong() },
                { QStringLiteral("messages_in_per_s"),
                  sortValue(NodesModel::MessagesInColumn).toDouble() },
                { QStringLiteral("messages_out_per_s"),
                  sortValue(NodesModel::MessagesOutColumn).toDouble() },
                { QStringLiteral("available"),
                  value(model, row, 0, NodesModel::AvailableRole).toBool() },
        });
    }
    return nodes;
}

QJsonArray placementOf(const PlacementModel &model)
{
    QJsonArray placement;
    for (int row = 0; row < model.rowCount(); ++row) {
        const auto role = [&](int r) { return value(model, row, 0, r); };
        QJsonObject users;
        const QVariantMap usersByNode = role(PlacementModel::UsersByNodeRole).toMap();
        for (auto it = usersByNode.cbegin(); it != usersByNode.cend(); ++it) {
            users.insert(it.key(), it.value().toLongLong());
        }
        placement.append(QJsonObject{
                { QStringLiteral("tenant"), role(KeyedTableModel::KeyRole).toString() },
                { QStringLiteral("stream_owner"),
                  textOrNull(role(PlacementModel::StreamOwnerRole).toString()) },
                { QStringLiteral("stream_state"),
                  textOrNull(role(PlacementModel::StreamStateRole).toString()) },
                { QStringLiteral("nodes"),
                  QJsonArray::fromStringList(role(PlacementModel::NodesRole).toStringList()) },
                { QStringLiteral("users"), users },
                { QStringLiteral("total_users"),
                  role(PlacementModel::TotalUsersRole).toLongLong() },
        });
    }
    return placement;
}

QJsonArray linksOf(const LinkFlowModel &model)
{
    QJsonArray links;
    for (int row = 0; row < model.rowCount(); ++row) {
        const auto role = [&](int r) { return value(model, row, 0, r); };
        links.append(QJsonObject{
                { QStringLiteral("from"), role(LinkFlowModel::FromRole).toString() },
                { QStringLiteral("to"), role(LinkFlowModel::ToRole).toString() },
                { QStringLiteral("messages_per_s"),
                  role(LinkFlowModel::MessagesPerSecondRole).toDouble() },
                { QStringLiteral("bytes_per_s"),
                  role(LinkFlowModel::BytesPerSecondRole).toDouble() },
        });
    }
    return links;
}

QJsonArray tenantFlowsOf(const TenantFlowModel &model)
{
    QJsonArray flows;
    for (int row = 0; row < model.rowCount(); ++row) {
        const auto role = [&](int r) { return value(model, row, 0, r); };
        flows.append(QJsonObject{
                { QStringLiteral("tenant"), role(TenantFlowModel::TenantRole).toString() },
                { QStringLiteral("node"), role(TenantFlowModel::NodeRole).toString() },
                { QStringLiteral("messages_in_per_s"),
                  role(TenantFlowModel::MessagesInPerSecondRole).toDouble() },
                { QStringLiteral("messages_out_per_s"),
                  role(TenantFlowModel::MessagesOutPerSecondRole).toDouble() },
        });
    }
    return flows;
}

// The key of every row (KeyRole) of a keyed model.
QJsonArray keysOf(const QAbstractItemModel &model)
{
    QJsonArray keys;
    for (int row = 0; row < model.rowCount(); ++row) {
        keys.append(value(model, row, 0, KeyedTableModel::KeyRole).toString());
    }
    return keys;
}

} // namespace

QJsonObject modelSummary(const SnapshotModels &models, const QString &connectionState)
{
    return QJsonObject{
        { QStringLiteral("answered_by"), textOrNull(models.answeredBy()) },
        { QStringLiteral("taken_at"), models.takenAtMs() },
        { QStringLiteral("connection"), connectionState },
        { QStringLiteral("nodes"), nodesOf(*models.nodes()) },
        { QStringLiteral("placement"), placementOf(*models.placement()) },
        { QStringLiteral("links"), linksOf(*models.links()) },
        { QStringLiteral("tenant_flows"), tenantFlowsOf(*models.tenantFlows()) },
        { QStringLiteral("config"),
          QJsonObject{ { QStringLiteral("revision"), models.config()->revision() },
                       { QStringLiteral("keys"), keysOf(*models.config()) } } },
        { QStringLiteral("tenants"), keysOf(*models.tenants()) },
    };
}

} // namespace rt::dashboard
