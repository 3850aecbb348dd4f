#include "server/cluster/links/handshake.h"

#include <QMessageAuthenticationCode>
#include <QRandomGenerator>
#include <QStringDecoder>

namespace rt::cluster::links {

namespace {

constexpr char Magic[] = "RTLINK";
constexpr qsizetype MagicBytes = 6;
constexpr char ProofLabel[] = "qtrealtime node link proof v1";

} // namespace

QByteArray encodeHello(const Hello &hello)
{
    const QByteArray id = hello.nodeId.toUtf8();
    QByteArray out;
    out.reserve(MagicBytes + 2 + hello.nonce.size() + id.size());
    out.append(Magic, MagicBytes);
    out.append(static_cast<char>(hello.version));
    out.append(hello.nonce);
    out.append(static_cast<char>(static_cast<quint8>(qMin<qsizetype>(id.size(), 255))));
    out.append(id.left(255));
    return out;
}

Result<Hello> decodeHello(QByteArrayView payload)
{
    constexpr qsizetype Fixed = MagicBytes + 1 + HelloNonceBytes + 1;
    if (payload.size() < Fixed || payload.first(MagicBytes) != QByteArrayView(Magic, MagicBytes)) {
        return Error{ QStringLiteral("not a node-link hello") };
    }
    Hello hello;
    hello.version = static_cast<quint8>(payload.at(MagicBytes));
    if (hello.version != LinkProtocolVersion) {
        return Error{ QStringLiteral("unsupported link protocol version %1 (this node speaks %2)")
                              .arg(hello.version)
                              .arg(LinkProtocolVersion) };
    }
    hello.nonce = payload.sliced(MagicBytes + 1, HelloNonceBytes).toByteArray();
    const auto idBytes = static_cast<quint8>(payload.at(Fixed - 1));
    if (idBytes == 0 || payload.size() != Fixed + idBytes) {
        return Error{ QStringLiteral("malformed hello (node id length)") };
    }
    const QByteArrayView id = payload.sliced(Fixed, idBytes);
    QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    hello.nodeId = utf8.decode(id);
    if (utf8.hasError() || hello.nodeId.contains(QChar(0))) {
        return Error{ QStringLiteral("malformed hello (node id is not UTF-8)") };
    }
    return hello;
}

Hello makeHello(const QString &nodeId)
{
    Hello hello;
    hello.nodeId = nodeId;
    hello.nonce.resize(HelloNonceBytes);
    QRandomGenerator::system()->generate(hello.nonce.begin(), hello.nonce.end());
    return hello;
}

QByteArray computeProof(QByteArrayView secret, HandshakeRole prover, QByteArrayView dialerHello,
                        QByteArrayView acceptorHello)
{
    QMessageAuthenticationCode mac(QCryptographicHash::Sha256, secret.toByteArray());
    mac.addData(ProofLabel, sizeof(ProofLabel) - 1);
    const char role = static_cast<char>(prover);
    mac.addData(&role, 1);
    // Length-prefix each hello so the concatenation is unambiguous.
    for (const QByteArrayView part : { dialerHello, acceptorHello }) {
        const auto size = static_cast<quint32>(part.size());
        const char length[4] = { static_cast<char>(size >> 24), static_cast<char>(size >> 16),
                                 static_cast<char>(size >> 8), static_cast<char>(size) };
        mac.addData(length, 4);
        mac.addData(part.data(), part.size());
    }
    return mac.result();
}

bool proofMatches(QByteArrayView expected, QByteArrayView received)
{
    if (expected.size() != received.size()) {
        return false;
    }
    unsigned char difference = 0;
    for (qsizetype i = 0; i < expected.size(); ++i) {
        difference |= static_cast<unsigned char>(expected.at(i) ^ received.at(i));
    }
    return difference == 0;
}

QByteArray encodeRejectReason(const QString &reason)
{
    QByteArray bytes = reason.toUtf8();
    if (bytes.size() > MaxRejectReasonBytes) {
        bytes.truncate(MaxRejectReasonBytes);
    }
    return bytes;
}

QString decodeRejectReason(QByteArrayView payload)
{
    return QString::fromUtf8(payload.first(qMin(payload.size(), MaxRejectReasonBytes)));
}

} // namespace rt::cluster::links
