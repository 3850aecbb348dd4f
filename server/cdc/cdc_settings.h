#pragma once

#include <QByteArray>
#include <QString>

namespace rt::cdc {

struct CdcSettings
{
    // A tenant database with no connected users and no subscribers for this long is closed
    // (the slot stays: the next start resumes from it).
    int idleTimeoutMs = 60'000;
    int connectRetryMs = 2000;
    int poolSize = 3;
    // SLOT_NAME_SUFFIX: appended to the slot name ("<slot>_<suffix>"), so that several servers
    // can stream one database.
    QByteArray slotNameSuffix;
    // RLS_STRATEGY=naive: one RLS query per subscriber per change. For the benchmark only.
    bool naiveRls = false;
    // In a cluster: how long a node that became the owner of a tenant's stream waits before
    // streaming, so that the other nodes' subscribers are registered with it first (the
    // changes left in the slot are then matched for them too).
    int streamTakeoverGraceMs = 1000;
    // CDC_MAX_INFLIGHT_BYTES: per tenant, decoded changes not yet with fan-out; beyond it the
    // change stream stops reading (the slot keeps the WAL).
    qsizetype maxInflightBytes = qsizetype{ 64 } * 1024 * 1024;
    // TENANT_DB_SSLROOTCERT: the CA file a tenant database with ssl_enforced is verified
    // against (verify-full); empty: the system's CA bundle.
    QString sslRootCert;
};

// Debian's bundle of the system's CAs (libpq 15 has no sslrootcert=system).
inline constexpr const char *SystemCaBundle = "/etc/ssl/certs/ca-certificates.crt";

} // namespace rt::cdc
