#pragma once

#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

namespace rt::cluster::links {

// The node-link handshake, as pure functions (the state machine is in LinkConnection).
//
//   dialer                                   acceptor
//     | -- Hello(nonce_d, id_d) -------------> |   both send Hello at once
//     | <------------- Hello(nonce_a, id_a) -- |
//     | -- Proof(HMAC(secret, "dialer" ...)) -> |   acceptor verifies, or Reject + close
//     | <- Proof(HMAC(secret, "acceptor" ...)) |   dialer verifies, or Reject + close
//     | == application frames ===============> |
//
// A proof is HMAC-SHA256 keyed with the cluster secret over a label, the role of the prover
// and both Hello payloads as sent (so it binds both nonces, both node ids and the version).
// The secret itself never crosses the wire. The acceptor proves itself only after the dialer
// has, so an unauthenticated client learns nothing but a random nonce. The role in the MAC
// stops a proof from being reflected back as the other side's. This authenticates peers; it
// does not encrypt or protect the frames that follow (run the links on a private network).

constexpr quint8 LinkProtocolVersion = 1;
constexpr qsizetype HelloNonceBytes = 32;
constexpr qsizetype MaxNodeIdBytes = 255;
constexpr qsizetype ProofBytes = 32;
constexpr qsizetype MaxRejectReasonBytes = 200;

struct Hello
{
    quint8 version = LinkProtocolVersion;
    QByteArray nonce; // HelloNonceBytes random bytes
    QString nodeId; // 1..MaxNodeIdBytes bytes of UTF-8
};

enum class HandshakeRole : quint8 { Dialer = 1, Acceptor = 2 };

// "RTLINK" | u8 version | nonce | u8 id length | id (UTF-8)
QByteArray encodeHello(const Hello &hello);
// Strict parse of a Hello payload: magic, supported version, exact lengths, valid UTF-8 id.
Result<Hello> decodeHello(QByteArrayView payload);

// A fresh Hello with a nonce from the system CSPRNG.
Hello makeHello(const QString &nodeId);

QByteArray computeProof(QByteArrayView secret, HandshakeRole prover, QByteArrayView dialerHello,
                        QByteArrayView acceptorHello);

// Constant-time comparison of a received proof with the expected one.
bool proofMatches(QByteArrayView expected, QByteArrayView received);

// A Reject payload: the reason cut to MaxRejectReasonBytes of UTF-8.
QByteArray encodeRejectReason(const QString &reason);
// The reason of a received Reject, bounded and decoded leniently (it is only logged).
QString decodeRejectReason(QByteArrayView payload);

} // namespace rt::cluster::links
