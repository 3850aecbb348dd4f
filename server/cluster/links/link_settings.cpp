#include "server/cluster/links/link_settings.h"

#include "server/cluster/links/handshake.h"

namespace rt::cluster::links {

std::optional<QString> validateLinkSettings(const LinkSettings &settings)
{
    const qsizetype idBytes = settings.nodeId.toUtf8().size();
    if (idBytes == 0 || idBytes > MaxNodeIdBytes) {
        return QStringLiteral("the node name must be 1 to %1 bytes").arg(MaxNodeIdBytes);
    }
    if (!settings.tls && settings.secret.size() < MinPlaintextSecretBytes) {
        return QStringLiteral("plaintext node links need a CLUSTER_SECRET of at least %1 bytes "
                              "(or mutual TLS: CLUSTER_TLS_CA_FILE, CLUSTER_TLS_CERT_FILE, "
                              "CLUSTER_TLS_KEY_FILE)")
                .arg(MinPlaintextSecretBytes);
    }
    if (settings.linksPerPeer < 1 || settings.linksPerPeer > 64) {
        return QStringLiteral("CLUSTER_LINKS_PER_PEER must be between 1 and 64 (got %1)")
                .arg(settings.linksPerPeer);
    }
    if (settings.maxFramePayloadBytes < 1024) {
        return QStringLiteral("the maximum frame size must be at least 1 KiB");
    }
    if (settings.maxQueuedBytesPerPeer < 1 || settings.maxQueuedFramesPerPeer < 1
        || settings.socketHighWaterBytes < 1) {
        return QStringLiteral("queue limits must be positive");
    }
    if (settings.reconnectInitialDelay.count() < 1
        || settings.reconnectMaxDelay < settings.reconnectInitialDelay
        || settings.handshakeTimeout.count() < 1 || settings.heartbeatInterval.count() < 1) {
        return QStringLiteral("link delays must be positive (and max reconnect >= initial)");
    }
    if (settings.maxPendingHandshakes < 1) {
        return QStringLiteral("maxPendingHandshakes must be positive");
    }
    return std::nullopt;
}

} // namespace rt::cluster::links
