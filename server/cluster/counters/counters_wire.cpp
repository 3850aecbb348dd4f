#include "server/cluster/counters/counters_wire.h"

#include "shared/core/big_endian.h"

#include <algorithm>
#include <limits>

namespace rt::cluster::counters {

namespace {

constexpr qint32 UsersAbsent = -1;
// The smallest encoded tenant (empty id, users, no rates) and rate: bounds for the counts a
// peer announces, so a forged count cannot make us reserve memory the payload cannot fill.
constexpr qsizetype MinTenantBytes = 4 + 4 + 1;
constexpr qsizetype RateBytes = 1 + 8;

Error malformed(const char *what)
{
    return Error{ QStringLiteral("malformed counters frame: %1").arg(QLatin1String(what)) };
}

} // namespace

bool isClusterWide(limits::RateCounterKind kind)
{
    return std::find(std::begin(ClusterWideKinds), std::end(ClusterWideKinds), kind)
            != std::end(ClusterWideKinds);
}

quint8 kindCode(limits::RateCounterKind kind)
{
    using limits::RateCounterKind;
    switch (kind) {
    case RateCounterKind::Events:
        return 1;
    case RateCounterKind::DbEvents:
        return 2;
    case RateCounterKind::PresenceEvents:
        return 3;
    case RateCounterKind::Joins:
        return 4;
    case RateCounterKind::Requests:
        return 5;
    case RateCounterKind::DatabaseConnect:
        return 6;
    case RateCounterKind::AuthorizationErrors:
        return 7;
    case RateCounterKind::SubscriptionErrors:
        return 8;
    }
    Q_UNREACHABLE();
    return 0;
}

std::optional<limits::RateCounterKind> kindFromCode(quint8 code)
{
    using limits::RateCounterKind;
    switch (code) {
    case 1:
        return RateCounterKind::Events;
    case 2:
        return RateCounterKind::DbEvents;
    case 3:
        return RateCounterKind::PresenceEvents;
    case 4:
        return RateCounterKind::Joins;
    case 5:
        return RateCounterKind::Requests;
    case 6:
        return RateCounterKind::DatabaseConnect;
    case 7:
        return RateCounterKind::AuthorizationErrors;
    case 8:
        return RateCounterKind::SubscriptionErrors;
    default:
        return std::nullopt;
    }
}

QByteArray encode(const Message &message)
{
    QByteArray out;
    appendBigEndian<quint8>(out, Version);
    appendBigEndian<quint32>(out, static_cast<quint32>(message.tenants.size()));
    for (const TenantFigures &tenant : message.tenants) {
        Q_ASSERT(tenant.tenantId.size() <= MaxTenantIdBytes);
        Q_ASSERT(tenant.rates.size() <= std::numeric_limits<quint8>::max());
        appendBigEndian<quint32>(out, static_cast<quint32>(tenant.tenantId.size()));
        out.append(tenant.tenantId);
        appendBigEndian<qint32>(out, tenant.users ? qMax(*tenant.users, 0) : UsersAbsent);
        appendBigEndian<quint8>(out, static_cast<quint8>(tenant.rates.size()));
        for (const RateFigure &rate : tenant.rates) {
            appendBigEndian<quint8>(out, kindCode(rate.kind));
            appendBigEndian<qint64>(out, qMax<qint64>(rate.count, 0));
        }
    }
    return out;
}

Result<Message> decode(QByteArrayView payload)
{
    BigEndianReader in(payload);
    const quint8 version = in.u8();
    if (in.failed()) {
        return malformed("empty payload");
    }
    if (version != Version) {
        return Error{ QStringLiteral("counters frame of unknown version %1").arg(version) };
    }
    const auto tenantCount = in.read<quint32>();
    if (in.failed() || tenantCount > static_cast<quint64>(in.remaining() / MinTenantBytes)) {
        return malformed("tenant count past the end");
    }
    Message message;
    message.tenants.reserve(static_cast<qsizetype>(tenantCount));
    for (quint32 i = 0; i < tenantCount; ++i) {
        TenantFigures tenant;
        const auto idSize = in.read<quint32>();
        if (in.failed() || idSize > static_cast<quint32>(MaxTenantIdBytes)) {
            return malformed("tenant id too long");
        }
        tenant.tenantId = in.bytes(static_cast<qsizetype>(idSize)).toByteArray();
        const auto users = in.read<qint32>();
        if (users < UsersAbsent) {
            return malformed("negative users");
        }
        if (users != UsersAbsent) {
            tenant.users = users;
        }
        const quint8 rateCount = in.u8();
        if (in.failed() || rateCount > in.remaining() / RateBytes) {
            return malformed("rate count past the end");
        }
        for (quint8 r = 0; r < rateCount; ++r) {
            const quint8 code = in.u8();
            const auto count = in.read<qint64>();
            if (count < 0) {
                return malformed("negative rate count");
            }
            if (const std::optional<limits::RateCounterKind> kind = kindFromCode(code)) {
                tenant.rates.append(RateFigure{ *kind, count });
            }
        }
        if (in.failed()) {
            return malformed("truncated tenant");
        }
        message.tenants.append(std::move(tenant));
    }
    if (!in.atEnd()) {
        return malformed("trailing bytes");
    }
    return message;
}

} // namespace rt::cluster::counters
