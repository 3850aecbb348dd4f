#pragma once

#include "server/tls/tls_context.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <openssl/types.h>

namespace rt::tls {

// One connection's TLS as a bytes-in, bytes-out engine over OpenSSL: ciphertext the socket read
// goes in with receive(), the plaintext comes out; plaintext goes in with encrypt(), and the
// ciphertext waits in pendingOutput() until the transport has sent it. It never touches a
// descriptor, so nothing here blocks, and two sessions (or a fuzzer) can be joined directly.
// Lives on the thread of its connection.
class TlsSession
{
public:
    enum class State { Handshaking, Established, Closed, Failed };

    // A server session, or a client one that verifies `peerName` (a host name or an address)
    // against the server's certificate.
    explicit TlsSession(TlsContextPtr context, const QString &peerName = QString());
    ~TlsSession();
    TlsSession(const TlsSession &) = delete;
    TlsSession &operator=(const TlsSession &) = delete;

    // Client role: produces the ClientHello.
    void startHandshake();
    // Feeds ciphertext from the peer and appends what it decrypts to `plaintext`. Returns false
    // once the session failed; an alert for the peer may then wait in pendingOutput().
    bool receive(QByteArrayView ciphertext, QByteArray &plaintext);
    // Encrypts application bytes into pendingOutput(); only once established. Every call ends
    // its records, so callers gather small writes first (a record carries up to 16 KiB).
    bool encrypt(QByteArrayView plaintext);
    // Queues close_notify; nothing is encrypted after it.
    void close();

    State state() const { return m_state; }
    bool isEstablished() const { return m_state == State::Established; }
    // The peer ended its side with close_notify.
    bool peerClosed() const { return m_peerClosed; }
    // Why the session failed (the handshake or a record), for the log.
    const QString &errorString() const { return m_error; }
    // "TLSv1.3" once established.
    QString protocolName() const;
    // The names in the peer's verified certificate: DNS names of its subjectAltName, then its
    // common name (each name once); empty without one.
    QStringList peerCertificateNames() const;

    QByteArrayView pendingOutput() const;
    bool hasPendingOutput() const { return m_outputOffset < m_output.size(); }
    void consumeOutput(qsizetype bytes);

    // For the BIO callbacks (internal).
    qsizetype readInput(char *buffer, qsizetype capacity);
    void appendOutput(const char *data, qsizetype size);

private:
    bool advanceHandshake();
    bool readRecords(QByteArray &plaintext);
    void fail(const QString &what);

    TlsContextPtr m_context;
    SSL *m_ssl = nullptr; // owned
    State m_state = State::Handshaking;
    bool m_peerClosed = false;
    QString m_error;
    QByteArrayView m_input; // the ciphertext of the receive() in progress
    QByteArray m_output; // ciphertext for the peer, sent from m_outputOffset on
    qsizetype m_outputOffset = 0;
};

} // namespace rt::tls
