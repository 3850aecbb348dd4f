#pragma once

#include <QJsonObject>
#include <QString>

namespace rt::dashboard {

class SnapshotModels;

// What the dashboard's models show, as JSON: the report mode writes it next to its screenshots
// (summary.json) so that a script or a test can check the picture without reading pixels. Read
// through the models' data() and roles, the way the views read them, never from the snapshot:
//
//   answered_by, taken_at                 the last snapshot applied (SnapshotModels)
//   connection                            `connectionState`, the status bar's text
//   nodes[]        NodesModel             id, region, load (null: no data yet), connections,
//                                         channels, messages_in_per_s, messages_out_per_s,
//                                         available
//   placement[]    PlacementModel         tenant, stream_owner (null: none), stream_state,
//                                         nodes (holding clients), users {node: n}, total_users
//   links[]        LinkFlowModel          from, to, messages_per_s, bytes_per_s
//   tenant_flows[] TenantFlowModel        tenant, node, messages_in_per_s, messages_out_per_s
//   config         ConfigModel            revision, keys[] (sorted)
//   tenants[]      TenantsModel           external ids (sorted)
//
// Rows come in the models' order (sorted by key).
QJsonObject modelSummary(const SnapshotModels &models, const QString &connectionState);

} // namespace rt::dashboard
