#include "server/tls/tls_context.h"

#include <QFile>
#include <QMutexLocker>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace rt::tls {

namespace {

// TLS 1.2 suites: forward secrecy and authenticated encryption only (TLS 1.3's are all so).
constexpr const char *Tls12Ciphers = "ECDHE+AESGCM:ECDHE+CHACHA20";
constexpr unsigned char Http11[] = { 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };

int versionConstant(ProtocolVersion version)
{
    return version == ProtocolVersion::Tls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
}

// An encrypted key would make OpenSSL prompt on the terminal: refuse it instead.
int noPassphrase(char *buffer, int size, int writing, void *data)
{
    Q_UNUSED(buffer)
    Q_UNUSED(size)
    Q_UNUSED(writing)
    Q_UNUSED(data)
    return 0;
}

// ALPN: this server speaks HTTP/1.1 only; a client offering only h2 goes on without ALPN.
int selectHttp11(SSL *ssl, const unsigned char **out, unsigned char *outLength,
                 const unsigned char *offered, unsigned int offeredLength, void *data)
{
    Q_UNUSED(ssl)
    Q_UNUSED(data)
    unsigned char *selected = nullptr;
    if (SSL_select_next_proto(&selected, outLength, Http11, sizeof(Http11), offered, offeredLength)
        != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

QByteArray nativePath(const QString &path)
{
    return QFile::encodeName(path);
}

// A clear error for a file that is missing or unreadable, before OpenSSL says it its way.
std::optional<Error> unreadable(const char *what, const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return Error{ QStringLiteral("cannot read the %1 %2: %3")
                              .arg(QLatin1String(what), path, file.errorString()) };
    }
    return std::nullopt;
}

std::optional<Error> failure(const char *what, const QString &path)
{
    return Error{ QStringLiteral("the %1 %2 cannot be used: %3")
                          .arg(QLatin1String(what), path,
                               takeOpenSslErrors(QStringLiteral("unknown OpenSSL error"))) };
}

SSL_CTX *newContext(const SSL_METHOD *method, ProtocolVersion minimum)
{
    SSL_CTX *context = SSL_CTX_new(method);
    if (context == nullptr) {
        return nullptr;
    }
    SSL_CTX_set_min_proto_version(context, versionConstant(minimum));
    SSL_CTX_set_options(context,
                        SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION
                                | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_cipher_list(context, Tls12Ciphers);
    // An idle connection gives its 16 KiB read and write buffers back (10,000 idle clients
    // would otherwise hold 320 MB).
    SSL_CTX_set_mode(context, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_default_passwd_cb(context, noPassphrase);
    return context;
}

std::optional<Error> useCertificateAndKey(SSL_CTX *context, const QString &certificateFile,
                                          const QString &keyFile)
{
    if (auto error = unreadable("certificate file", certificateFile)) {
        return error;
    }
    if (auto error = unreadable("key file", keyFile)) {
        return error;
    }
    ERR_clear_error();
    if (SSL_CTX_use_certificate_chain_file(context, nativePath(certificateFile).constData()) != 1) {
        return failure("certificate file", certificateFile);
    }
    if (SSL_CTX_use_PrivateKey_file(context, nativePath(keyFile).constData(), SSL_FILETYPE_PEM)
        != 1) {
        return failure("key file", keyFile);
    }
    if (SSL_CTX_check_private_key(context) != 1) {
        return Error{ QStringLiteral("the key file %1 does not belong to the certificate %2")
                              .arg(keyFile, certificateFile) };
    }
    return std::nullopt;
}

std::optional<Error> trustCa(SSL_CTX *context, const QString &caFile)
{
    if (auto error = unreadable("CA file", caFile)) {
        return error;
    }
    ERR_clear_error();
    if (SSL_CTX_load_verify_locations(context, nativePath(caFile).constData(), nullptr) != 1) {
        return failure("CA file", caFile);
    }
    return std::nullopt;
}

QString describeName(X509_NAME *name)
{
    BIO *bio = BIO_new(BIO_s_mem());
    X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253);
    char *data = nullptr;
    const long length = BIO_get_mem_data(bio, &data);
    QString text = QString::fromUtf8(data, length);
    BIO_free(bio);
    return text;
}

QString describeCertificate(SSL_CTX *context)
{
    X509 *certificate = SSL_CTX_get0_certificate(context);
    if (certificate == nullptr) {
        return {};
    }
    BIO *bio = BIO_new(BIO_s_mem());
    ASN1_TIME_print(bio, X509_get0_notAfter(certificate));
    char *data = nullptr;
    const long length = BIO_get_mem_data(bio, &data);
    const QString expiry = QString::fromUtf8(data, length);
    BIO_free(bio);
    const bool expired = X509_cmp_current_time(X509_get0_notAfter(certificate)) < 0;
    return QStringLiteral("%1, valid until %2%3")
            .arg(describeName(X509_get_subject_name(certificate)), expiry,
                 expired ? QStringLiteral(" (EXPIRED)") : QString());
}

} // namespace

std::optional<ProtocolVersion> parseProtocolVersion(QStringView text)
{
    QString normalised = text.trimmed().toString().toLower();
    normalised.remove(QStringLiteral("tlsv"));
    normalised.remove(QStringLiteral("tls"));
    if (normalised == QLatin1String("1.2")) {
        return ProtocolVersion::Tls12;
    }
    if (normalised == QLatin1String("1.3")) {
        return ProtocolVersion::Tls13;
    }
    return std::nullopt;
}

TlsContext::~TlsContext()
{
    SSL_CTX_free(m_context);
}

Result<TlsContextPtr> TlsContext::forServer(const ServerCredentials &credentials)
{
    SSL_CTX *native = newContext(TLS_server_method(), credentials.minimumVersion);
    if (native == nullptr) {
        return Error{ takeOpenSslErrors(QStringLiteral("cannot create a TLS context")) };
    }
    std::shared_ptr<TlsContext> context(new TlsContext(Role::Server, native));
    if (auto error =
                useCertificateAndKey(native, credentials.certificateFile, credentials.keyFile)) {
        return *error;
    }
    if (!credentials.clientCaFile.isEmpty()) {
        if (auto error = trustCa(native, credentials.clientCaFile)) {
            return *error;
        }
        SSL_CTX_set_verify(native, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
    SSL_CTX_set_alpn_select_cb(native, selectHttp11, nullptr);
    context->m_summary = describeCertificate(native);
    return TlsContextPtr(std::move(context));
}

Result<TlsContextPtr> TlsContext::forClient(const ClientSettings &settings)
{
    SSL_CTX *native = newContext(TLS_client_method(), settings.minimumVersion);
    if (native == nullptr) {
        return Error{ takeOpenSslErrors(QStringLiteral("cannot create a TLS context")) };
    }
    std::shared_ptr<TlsContext> context(new TlsContext(Role::Client, native));
    if (settings.caFile.isEmpty()) {
        SSL_CTX_set_default_verify_paths(native);
    } else if (auto error = trustCa(native, settings.caFile)) {
        return *error;
    }
    SSL_CTX_set_verify(native, SSL_VERIFY_PEER, nullptr);
    if (!settings.certificateFile.isEmpty()) {
        if (auto error = useCertificateAndKey(native, settings.certificateFile, settings.keyFile)) {
            return *error;
        }
        context->m_summary = describeCertificate(native);
    }
    return TlsContextPtr(std::move(context));
}

Result<std::shared_ptr<ReloadableServerContext>>
ReloadableServerContext::load(ServerCredentials credentials)
{
    Result<TlsContextPtr> context = TlsContext::forServer(credentials);
    if (!context) {
        return context.error();
    }
    return std::shared_ptr<ReloadableServerContext>(
            new ReloadableServerContext(std::move(credentials), std::move(context).value()));
}

TlsContextPtr ReloadableServerContext::current() const
{
    const QMutexLocker lock(&m_mutex);
    return m_current;
}

Result<QString> ReloadableServerContext::reload()
{
    Result<TlsContextPtr> context = TlsContext::forServer(m_credentials);
    if (!context) {
        return context.error();
    }
    QString summary = context.value()->certificateSummary();
    {
        const QMutexLocker lock(&m_mutex);
        m_current = std::move(context).value();
    }
    return summary;
}

QString takeOpenSslErrors(const QString &fallback)
{
    QStringList messages;
    while (const unsigned long code = ERR_get_error()) {
        char text[256] = {};
        ERR_error_string_n(code, text, sizeof(text));
        messages.append(QString::fromLatin1(text));
    }
    return messages.isEmpty() ? fallback : messages.join(QStringLiteral("; "));
}

} // namespace rt::tls
