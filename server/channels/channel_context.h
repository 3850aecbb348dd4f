#pragma once

#include <QJsonObject>

#include <atomic>

namespace rt {
class Clock;
}
namespace rt::tenants {
class TenantDirectory;
class TenantUsageRegistry;
class TenantRates;
} // namespace rt::tenants
namespace rt::pubsub {
class Hub;
class PubSub;
class SequencingPubSub;
} // namespace rt::pubsub
namespace rt::presence {
class PresenceStore;
}
namespace rt::metrics {
class ServerMetrics;
}
namespace rt::cdc {
class CdcService;
}

namespace rt::channels {

struct ChannelSettings
{
    int channelErrorBackoffMs = 5000; // CHANNEL_ERROR_BACKOFF_MS: every join error waits this long
    QJsonObject claimValidators; // JWT_CLAIM_VALIDATORS
    // Per-channel presence push limit when the tenant sets none (CLIENT_PRESENCE_MAX_CALLS,
    // CLIENT_PRESENCE_WINDOW_MS).
    int clientPresenceMaxCalls = 5;
    int clientPresenceWindowMs = 30'000;
    // NO_CHANNEL_TIMEOUT_IN_MS: a socket that had channels and has had none for this long is
    // dropped without a close frame (upstream's empty-socket sweeper, spec §1.6).
    int noChannelTimeoutMs = 600'000;
};

// The node services one worker's channels use. The references outlive the workers; the hub is
// the worker's own.
struct ChannelContext
{
    tenants::TenantDirectory &tenants;
    tenants::TenantUsageRegistry &usage;
    const tenants::TenantRates &rates;
    pubsub::Hub &hub;
    const pubsub::PubSub &pubsub; // broadcasts: this node and, in a cluster, the others
    presence::PresenceStore &presence;
    const Clock &clock;
    const std::atomic<bool> &shuttingDown;
    metrics::ServerMetrics &metrics;
    ChannelSettings settings;
    // Tenant databases (postgres_changes, private channels, replay); nullptr in tests that run
    // without databases: tenants with a database extension are then joined without one.
    cdc::CdcService *cdc = nullptr;
    // The sequencer `pubsub` numbers through, whose histories recovery reads; nullptr: no
    // positions (joins asking to recover are told "history disabled").
    const pubsub::SequencingPubSub *sequencer = nullptr;
};

} // namespace rt::channels
