#include "server/tls/tls_session.h"

#include "server/tls/logging.h"

#include <QHostAddress>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cstring>

namespace rt::tls {

namespace {

constexpr qsizetype RecordPlaintextBytes =
        qsizetype{ 16 } * 1024; // the largest TLS record's content
// An idle session keeps this much output buffer; a burst's larger one is given back.
constexpr qsizetype KeptOutputCapacity = qsizetype{ 16 } * 1024 + 256;

TlsSession *sessionOf(BIO *bio)
{
    return static_cast<TlsSession *>(BIO_get_data(bio));
}

int writeToSession(BIO *bio, const char *data, size_t size, size_t *written)
{
    sessionOf(bio)->appendOutput(data, static_cast<qsizetype>(size));
    *written = size;
    return 1;
}

int readFromSession(BIO *bio, char *buffer, size_t capacity, size_t *read)
{
    BIO_clear_retry_flags(bio);
    const qsizetype count = sessionOf(bio)->readInput(
            buffer, static_cast<qsizetype>(std::min<size_t>(capacity, 1U << 30U)));
    *read = static_cast<size_t>(count);
    if (count == 0) {
        BIO_set_retry_read(bio); // more arrives with the next receive()
        return 0;
    }
    return 1;
}

long controlSession(BIO *bio, int command, long number, void *pointer)
{
    Q_UNUSED(bio)
    Q_UNUSED(number)
    Q_UNUSED(pointer)
    return command == BIO_CTRL_FLUSH ? 1 : 0;
}

int createSessionBio(BIO *bio)
{
    BIO_set_init(bio, 1);
    return 1;
}

// The BIO between OpenSSL and a TlsSession's buffers (made once, shared by every session).
BIO_METHOD *sessionBioMethod()
{
    static BIO_METHOD *const Method = [] {
        BIO_METHOD *made =
                BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "rt-tls-session");
        BIO_meth_set_write_ex(made, writeToSession);
        BIO_meth_set_read_ex(made, readFromSession);
        BIO_meth_set_ctrl(made, controlSession);
        BIO_meth_set_create(made, createSessionBio);
        return made;
    }();
    return Method;
}

QString asn1Text(const ASN1_STRING *text)
{
    return QString::fromUtf8(reinterpret_cast<const char *>(ASN1_STRING_get0_data(text)),
                             ASN1_STRING_length(text));
}

} // namespace

TlsSession::TlsSession(TlsContextPtr context, const QString &peerName)
    : m_context(std::move(context))
{
    m_ssl = SSL_new(m_context->native());
    BIO *bio = m_ssl != nullptr ? BIO_new(sessionBioMethod()) : nullptr;
    if (bio == nullptr) {
        fail(QStringLiteral("cannot create a TLS session"));
        return;
    }
    BIO_set_data(bio, this);
    SSL_set_bio(m_ssl, bio, bio); // the session owns the one reference
    if (m_context->role() == TlsContext::Role::Server) {
        SSL_set_accept_state(m_ssl);
        return;
    }
    SSL_set_connect_state(m_ssl);
    const QByteArray name = peerName.toUtf8();
    if (QHostAddress(peerName).isNull()) {
        // SNI (SSL_set_tlsext_host_name is a macro with a C cast).
        SSL_ctrl(m_ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                 const_cast<char *>(name.constData()));
        SSL_set1_host(m_ssl, name.constData());
    } else {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(m_ssl), name.constData());
    }
}

TlsSession::~TlsSession()
{
    SSL_free(m_ssl);
}

void TlsSession::startHandshake()
{
    if (m_state == State::Handshaking) {
        ERR_clear_error();
        advanceHandshake();
    }
}

bool TlsSession::receive(QByteArrayView ciphertext, QByteArray &plaintext)
{
    if (m_state == State::Failed) {
        return false;
    }
    if (m_state == State::Closed) {
        return true; // after our close_notify, what the peer sends is of no use
    }
    ERR_clear_error();
    m_input = ciphertext;
    const bool ok = (m_state != State::Handshaking || advanceHandshake())
            && (m_state != State::Established || readRecords(plaintext));
    m_input = {};
    return ok;
}

bool TlsSession::advanceHandshake()
{
    const int result = SSL_do_handshake(m_ssl);
    if (result == 1) {
        m_state = State::Established;
        qCDebug(lcTls) << "handshake done:" << protocolName();
        return true;
    }
    if (SSL_get_error(m_ssl, result) == SSL_ERROR_WANT_READ) {
        return true;
    }
    fail(QStringLiteral("TLS handshake failed"));
    return false;
}

bool TlsSession::readRecords(QByteArray &plaintext)
{
    for (;;) {
        const qsizetype start = plaintext.size();
        plaintext.resize(start + RecordPlaintextBytes);
        size_t read = 0;
        const int result =
                SSL_read_ex(m_ssl, plaintext.data() + start, RecordPlaintextBytes, &read);
        plaintext.resize(start + static_cast<qsizetype>(read));
        if (result == 1) {
            continue;
        }
        switch (SSL_get_error(m_ssl, result)) {
        case SSL_ERROR_WANT_READ:
            return true;
        case SSL_ERROR_ZERO_RETURN:
            m_peerClosed = true;
            return true;
        default:
            fail(QStringLiteral("TLS record rejected"));
            return false;
        }
    }
}

bool TlsSession::encrypt(QByteArrayView plaintext)
{
    if (m_state != State::Established) {
        return false;
    }
    if (plaintext.isEmpty()) {
        return true;
    }
    ERR_clear_error();
    size_t written = 0;
    if (SSL_write_ex(m_ssl, plaintext.data(), static_cast<size_t>(plaintext.size()), &written) != 1
        || static_cast<qsizetype>(written) != plaintext.size()) {
        fail(QStringLiteral("TLS encryption failed"));
        return false;
    }
    return true;
}

void TlsSession::close()
{
    if (m_state == State::Established) {
        ERR_clear_error();
        SSL_shutdown(m_ssl); // writes close_notify; the peer's answer is not awaited
    }
    if (m_state != State::Failed) {
        m_state = State::Closed;
    }
}

QString TlsSession::protocolName() const
{
    return m_ssl != nullptr ? QString::fromLatin1(SSL_get_version(m_ssl)) : QString();
}

QStringList TlsSession::peerCertificateNames() const
{
    QStringList names;
    X509 *certificate = m_ssl != nullptr ? SSL_get0_peer_certificate(m_ssl) : nullptr;
    if (certificate == nullptr || SSL_get_verify_result(m_ssl) != X509_V_OK) {
        return names;
    }
    auto *alternatives = static_cast<GENERAL_NAMES *>(
            X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
    for (int i = 0; i < sk_GENERAL_NAME_num(alternatives); ++i) {
        const GENERAL_NAME *name = sk_GENERAL_NAME_value(alternatives, i);
        if (name->type == GEN_DNS) {
            names.append(asn1Text(name->d.dNSName));
        }
    }
    GENERAL_NAMES_free(alternatives);
    X509_NAME *subject = X509_get_subject_name(certificate);
    const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
    if (index >= 0) {
        names.append(asn1Text(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index))));
    }
    names.removeDuplicates();
    return names;
}

QByteArrayView TlsSession::pendingOutput() const
{
    return QByteArrayView(m_output).sliced(m_outputOffset);
}

void TlsSession::consumeOutput(qsizetype bytes)
{
    m_outputOffset = std::min(m_outputOffset + bytes, m_output.size());
    if (m_outputOffset < m_output.size()) {
        return;
    }
    m_outputOffset = 0;
    if (m_output.capacity() > KeptOutputCapacity) {
        m_output = QByteArray();
    } else {
        m_output.resize(0);
    }
}

qsizetype TlsSession::readInput(char *buffer, qsizetype capacity)
{
    const qsizetype count = std::min(capacity, m_input.size());
    if (count > 0) {
        std::memcpy(buffer, m_input.data(), static_cast<std::size_t>(count));
        m_input = m_input.sliced(count);
    }
    return count;
}

void TlsSession::appendOutput(const char *data, qsizetype size)
{
    m_output.append(data, size);
}

void TlsSession::fail(const QString &what)
{
    m_state = State::Failed;
    m_error = what + QStringLiteral(": ") + takeOpenSslErrors(QStringLiteral("no details"));
    qCDebug(lcTls).noquote() << m_error;
}

} // namespace rt::tls
