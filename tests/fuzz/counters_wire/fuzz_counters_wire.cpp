// libFuzzer target for the cluster-wide counters messages (frame kinds 28 and 29), decoded from
// another node's untrusted bytes on the cluster thread, and for what the receiver does with
// them (RemoteFigures, the peers' users per tenant).
//
// The input is the frame payload. Besides crashes, the target aborts when a promise breaks: a
// decoded message has ids of at most MaxTenantIdBytes, users >= 0 and counts >= 0; encoding it
// gives the input back, except for the rates of unknown kinds, which are dropped (9 bytes
// each); it decodes again to the same message. Applied as an update from one peer and as a
// sync from another, every tenant's total is the sum of its peers' positive figures (saturated
// at INT_MAX), each peer holds the last figure a message named for a tenant, and dropping both
// peers leaves nothing.
#include "server/cluster/counters/counters_state.h"
#include "server/cluster/counters/counters_wire.h"

#include <QHash>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

using namespace rt::cluster::counters;

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

void checkMessage(const Message &message)
{
    for (const TenantFigures &tenant : message.tenants) {
        require(tenant.tenantId.size() <= MaxTenantIdBytes);
        require(!tenant.users || *tenant.users >= 0);
        for (const RateFigure &rate : tenant.rates) {
            require(rate.count >= 0);
            require(kindFromCode(kindCode(rate.kind)) == rate.kind);
        }
    }
}

void checkCanonical(QByteArrayView bytes, const Message &message)
{
    const QByteArray again = encode(message);
    if (again != bytes) {
        // Only rates of unknown kinds are lost, and each took 9 bytes.
        require(again.size() < bytes.size());
        require((bytes.size() - again.size()) % 9 == 0);
    }
    const auto twice = decode(again);
    require(twice.ok() && *twice == message);
    require(encode(*twice) == again);
}

// Tenant -> the last users figure the message names for it (duplicates: the last one counts).
QHash<QByteArray, int> lastFigures(const Message &message)
{
    QHash<QByteArray, int> last;
    for (const TenantFigures &tenant : message.tenants) {
        if (tenant.users) {
            last.insert(tenant.tenantId, *tenant.users);
        }
    }
    return last;
}

void checkTotals(const RemoteFigures &figures)
{
    const UsersByNode byNode = figures.usersByNode();
    for (auto tenant = byNode.cbegin(); tenant != byNode.cend(); ++tenant) {
        qint64 sum = 0;
        for (const int users : tenant.value()) {
            require(users > 0);
            sum += users;
        }
        require(figures.total(tenant.key()) == static_cast<int>(qMin<qint64>(sum, INT_MAX)));
    }
}

void checkApplied(const Message &message)
{
    const QString a = QStringLiteral("node-a");
    const QString b = QStringLiteral("node-b");
    RemoteFigures figures;
    figures.apply(a, message, false);
    figures.apply(b, message, true);
    checkTotals(figures);
    const QHash<QByteArray, int> last = lastFigures(message);
    const UsersByNode byNode = figures.usersByNode();
    for (auto it = last.cbegin(); it != last.cend(); ++it) {
        const QHash<QString, int> peers = byNode.value(it.key());
        for (const QString &peer : { a, b }) {
            require(it.value() > 0 ? peers.value(peer) == it.value() : !peers.contains(peer));
        }
    }
    const QHash<QByteArray, int> changed = figures.takeChangedTotals();
    for (auto it = changed.cbegin(); it != changed.cend(); ++it) {
        require(it.value() >= 0 && it.value() == figures.total(it.key()));
    }
    require(figures.takeChangedTotals().isEmpty());
    figures.dropPeer(a);
    figures.dropPeer(b);
    require(figures.usersByNode().isEmpty() && figures.peers().isEmpty());
    for (auto it = last.cbegin(); it != last.cend(); ++it) {
        require(figures.total(it.key()) == 0);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView bytes(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const auto message = decode(bytes);
    if (!message.ok()) {
        require(!message.error().message.isEmpty());
        return 0;
    }
    checkMessage(*message);
    checkCanonical(bytes, *message);
    checkApplied(*message);
    return 0;
}
