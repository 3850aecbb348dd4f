#pragma once

#include "shared/core/result.h"

#include <QMutex>
#include <QString>
#include <QStringList>

#include <openssl/types.h>

#include <memory>
#include <optional>

namespace rt::tls {

enum class ProtocolVersion { Tls12, Tls13 };

// "1.2" or "1.3" (also "TLSv1.2", "tls1.3"); nothing for anything else.
std::optional<ProtocolVersion> parseProtocolVersion(QStringView text);

// What a TLS server presents, as PEM files.
struct ServerCredentials
{
    QString certificateFile; // the certificate, then its chain (intermediates)
    QString keyFile; // its private key, unencrypted
    ProtocolVersion minimumVersion = ProtocolVersion::Tls12;
    // Non-empty: every client must present a certificate issued by this CA (mutual TLS).
    QString clientCaFile;
};

// What a TLS client trusts, and the certificate it presents if the server asks.
struct ClientSettings
{
    QString caFile; // empty: the system's certificate authorities
    QString certificateFile; // optional, with keyFile
    QString keyFile;
    ProtocolVersion minimumVersion = ProtocolVersion::Tls12;
};

// One OpenSSL context (SSL_CTX) for one role and one set of credentials, immutable once made:
// TLS 1.2 (ECDHE with AEAD ciphers only) or 1.3, no renegotiation, no compression, ALPN
// http/1.1 on the server side, and buffers released while a connection is idle. Sessions hold a
// reference, so a replaced context lives until its last connection ends. Any thread.
class TlsContext
{
public:
    enum class Role { Server, Client };

    // Loads and checks the files; the error names the file and what OpenSSL said of it.
    static Result<std::shared_ptr<const TlsContext>>
    forServer(const ServerCredentials &credentials);
    static Result<std::shared_ptr<const TlsContext>> forClient(const ClientSettings &settings);

    ~TlsContext();
    TlsContext(const TlsContext &) = delete;
    TlsContext &operator=(const TlsContext &) = delete;

    Role role() const { return m_role; }
    SSL_CTX *native() const { return m_context; }
    // The leaf certificate's subject, names and expiry, for the log ("" without one).
    const QString &certificateSummary() const { return m_summary; }

private:
    TlsContext(Role role, SSL_CTX *context) : m_role(role), m_context(context) { }

    Role m_role;
    SSL_CTX *m_context; // owned
    QString m_summary;
};

using TlsContextPtr = std::shared_ptr<const TlsContext>;

// The server context that new connections of a listener take. reload() (on SIGHUP) builds a new
// context from the same files and swaps it in only if it loads, so a broken renewal leaves the
// old certificate serving; connections keep the context they started with. Thread-safe: workers
// call current() while the main thread reloads.
class ReloadableServerContext
{
public:
    static Result<std::shared_ptr<ReloadableServerContext>> load(ServerCredentials credentials);

    TlsContextPtr current() const;
    // The new certificate's summary, or why the files could not be used (the old one stays).
    Result<QString> reload();

private:
    ReloadableServerContext(ServerCredentials credentials, TlsContextPtr context)
        : m_credentials(std::move(credentials)),
          m_current(std::move(context))
    { }

    const ServerCredentials m_credentials;
    mutable QMutex m_mutex;
    TlsContextPtr m_current; // guarded by m_mutex
};

// Everything on this thread's OpenSSL error queue, oldest first, joined by "; " (and the queue
// emptied); `fallback` when it is empty.
QString takeOpenSslErrors(const QString &fallback = QString());

} // namespace rt::tls
