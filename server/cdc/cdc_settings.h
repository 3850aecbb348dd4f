#pragma once

#include <QByteArray>

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
};

} // namespace rt::cdc
