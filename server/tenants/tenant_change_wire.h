#pragma once

#include "server/cluster/links/frame_kinds.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>

// The node-link message "this tenant was written here" (frame kind 27): a node whose tenant API
// created, changed or deleted a tenant tells its peers, which re-read that tenant from the
// control plane at once instead of at their next cache refresh. Pure functions.
//
// Payload (version 1):   u8 version | external id (UTF-8, 1 to MaxIdBytes bytes)
// Decoding a peer's bytes never crashes: an empty payload, an unknown version, an empty or
// overlong id and an id that is not UTF-8 are error values. The format is canonical: a payload
// that decodes is exactly the encoding of what it decodes to.
namespace rt::tenants::change_wire {

inline constexpr quint8 KindTenantWritten =
        cluster::links::kindValue(cluster::links::FrameKind::TenantWritten);
inline constexpr quint8 Version = 1;
inline constexpr qsizetype MaxIdBytes = 1024;

// The payload for `externalId` (which must be 1 to MaxIdBytes bytes of UTF-8).
QByteArray encode(QByteArrayView externalId);
// The external id a payload names.
Result<QByteArray> decode(QByteArrayView payload);

} // namespace rt::tenants::change_wire
