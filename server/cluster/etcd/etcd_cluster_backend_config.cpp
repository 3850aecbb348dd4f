#include "server/cluster/etcd/etcd_cluster_backend.h"
#include "server/cluster/logging.h"

#include <QDateTime>

#include <optional>

// EtcdClusterBackend's configuration keys: compare-and-swap writes and deletes, temporary
// entries on leases of their own and when they expire, and the hooks tests use to break the
// backend on purpose. Membership, claims and the watch are in etcd_cluster_backend.cpp.
namespace rt::cluster {

using namespace rt::cluster::etcd;

namespace {

ConfigWriteResult unavailable(const QString &message)
{
    return ConfigWriteError{ ConfigWriteError::Kind::Unavailable, std::nullopt, message };
}

// What a compare-and-swap that failed found at `key` (its failure branch reads the key).
std::optional<ConfigEntry> entryFoundBy(const QString &key, const TxnResponse &response)
{
    if (response.responses.isEmpty() || response.responses.first().kvs.isEmpty()) {
        return std::nullopt;
    }
    const KeyValue &kv = response.responses.first().kvs.first();
    return ConfigEntry{ key, kv.value, kv.modRevision, kv.lease != 0 };
}

} // namespace

void EtcdClusterBackend::putConfig(const QString &key, const QByteArray &value,
                                   qint64 expectedModRevision, int ttlSeconds, ConfigCallback done)
{
    if (key.isEmpty() || expectedModRevision < 0 || ttlSeconds < 0) {
        later([done = std::move(done)] {
            done(ConfigWriteError{
                    ConfigWriteError::Kind::Invalid, std::nullopt,
                    QStringLiteral("empty key, negative revision or negative TTL") });
        });
        return;
    }
    auto write = [this, key, value, expectedModRevision, done](qint64 lease) {
        const QByteArray etcdKey = configKey(key);
        TxnRequest txn;
        // A missing key has mod revision 0, so 0 means "must not exist".
        txn.compare.append(Compare::modRevision(etcdKey, expectedModRevision));
        txn.success.append(RequestOp::put(etcdKey, value, lease));
        txn.failure.append(RequestOp::range(etcdKey));
        m_client->txn(txn, [this, key, lease, done](EtcdResult<TxnResponse> result) {
            if (lease != 0 && (!result || !result->succeeded)) {
                m_client->leaseRevoke(lease, [](const EtcdResult<qint64> &) {});
            }
            if (!result) {
                done(unavailable(result.error().message));
                return;
            }
            if (result->succeeded) {
                done(result->revision);
                return;
            }
            const std::optional<ConfigEntry> current = entryFoundBy(key, *result);
            done(ConfigWriteError{
                    ConfigWriteError::Kind::Conflict, current,
                    QStringLiteral("%1 was changed concurrently (now at revision %2)")
                            .arg(key)
                            .arg(current ? current->modRevision : 0) });
        });
    };
    if (ttlSeconds == 0) {
        write(0);
        return;
    }
    m_client->leaseGrant(ttlSeconds, [write, done](EtcdResult<LeaseGrantResponse> result) {
        if (!result) {
            done(unavailable(result.error().message));
            return;
        }
        write(result->id);
    });
}

void EtcdClusterBackend::deleteConfig(const QString &key, qint64 expectedModRevision,
                                      ConfigCallback done)
{
    if (key.isEmpty() || expectedModRevision < 0) {
        later([done = std::move(done)] {
            done(ConfigWriteError{ ConfigWriteError::Kind::Invalid, std::nullopt,
                                   QStringLiteral("empty key or negative revision") });
        });
        return;
    }
    const QByteArray etcdKey = configKey(key);
    if (expectedModRevision == 0) {
        m_client->deleteRange(etcdKey, {}, [done](EtcdResult<DeleteRangeResponse> result) {
            if (!result) {
                done(unavailable(result.error().message));
                return;
            }
            done(result->revision);
        });
        return;
    }
    TxnRequest txn;
    txn.compare.append(Compare::modRevision(etcdKey, expectedModRevision));
    txn.success.append(RequestOp::deleteKey(etcdKey));
    txn.failure.append(RequestOp::range(etcdKey));
    m_client->txn(txn, [key, done](EtcdResult<TxnResponse> result) {
        if (!result) {
            done(unavailable(result.error().message));
            return;
        }
        if (result->succeeded) {
            done(result->revision);
            return;
        }
        const std::optional<ConfigEntry> current = entryFoundBy(key, *result);
        done(ConfigWriteError{ ConfigWriteError::Kind::Conflict, current,
                               QStringLiteral("%1 is not at the expected revision").arg(key) });
    });
}

// --- test hooks ------------------------------------------------------------------------------

void EtcdClusterBackend::suspendKeepAliveForTesting()
{
    m_keepAliveSuspended = true;
}

void EtcdClusterBackend::dropWatchForTesting(bool pause)
{
    if (!m_watch) {
        return;
    }
    if (pause) {
        m_watch->setPausedForTesting(true);
    }
    m_watch->dropStreamForTesting();
}

void EtcdClusterBackend::resumeWatchForTesting()
{
    if (m_watch) {
        m_watch->setPausedForTesting(false);
    }
}

QHash<QString, qint64> EtcdClusterBackend::configExpiries() const
{
    QHash<QString, qint64> expiries;
    for (auto it = m_configLeases.cbegin(); it != m_configLeases.cend(); ++it) {
        if (const auto expiry = m_leaseExpiries.constFind(it.value());
            expiry != m_leaseExpiries.cend()) {
            expiries.insert(it.key(), *expiry);
        }
    }
    return expiries;
}

void EtcdClusterBackend::noteConfigLease(const QString &key, qint64 lease)
{
    if (lease == 0) {
        m_configLeases.remove(key);
    } else {
        m_configLeases.insert(key, lease);
    }
    // Forget the expiries of leases no entry is bound to any more (a handful of keys).
    for (auto it = m_leaseExpiries.begin(); it != m_leaseExpiries.end();) {
        it = std::find(m_configLeases.cbegin(), m_configLeases.cend(), it.key())
                        == m_configLeases.cend()
                ? m_leaseExpiries.erase(it)
                : std::next(it);
    }
    if (lease == 0 || m_leaseExpiries.contains(lease) || m_leaseLookups.contains(lease)) {
        return;
    }
    // A lease's TTL never grows (nobody keeps a config lease alive): one answer is enough.
    m_leaseLookups.insert(lease);
    const quint64 generation = m_generation;
    m_client->leaseTimeToLive(
            lease, [this, lease, generation](EtcdResult<LeaseTimeToLiveResponse> result) {
                m_leaseLookups.remove(lease);
                if (generation != m_generation) {
                    return;
                }
                if (!result) {
                    qCDebug(lcCluster).noquote() << "etcd: no time to live for config lease"
                                                 << lease << result.error().message;
                    return;
                }
                if (result->ttl >= 0
                    && std::find(m_configLeases.cbegin(), m_configLeases.cend(), lease)
                            != m_configLeases.cend()) {
                    m_leaseExpiries.insert(
                            lease, QDateTime::currentMSecsSinceEpoch() + result->ttl * 1000);
                }
            });
}

} // namespace rt::cluster
