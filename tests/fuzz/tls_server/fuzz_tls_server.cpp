// Fuzzes a server TlsSession (the engine behind every TLS client connection) with what a hostile
// client may send before and after a handshake: the input is cut into pieces at data-derived
// offsets and fed as successive reads, the session's output drained in between. Checks that it
// never crashes, that a failed session stays failed and refuses to encrypt, and that its output
// and decrypted input stay bounded by what it was given.
//
// Input layout: byte 0 is the piece length seed, the rest is the client's byte stream.
#include "server/tls/tls_context.h"
#include "server/tls/tls_session.h"
#include "tests/support/tls/test_certificates.h"

#include <QDir>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace {

rt::tls::TlsContextPtr serverContext()
{
    static const rt::tls::TlsContextPtr context = [] {
        static QTemporaryDir dir;
        const rt::testing::TestCertificateAuthority authority;
        const rt::testing::IssuedCertificate issued =
                authority.issue({ QStringLiteral("localhost") });
        rt::tls::ServerCredentials credentials;
        credentials.certificateFile = dir.filePath(QStringLiteral("server.crt"));
        credentials.keyFile = dir.filePath(QStringLiteral("server.key"));
        rt::testing::writeFile(credentials.certificateFile, issued.certificatePem);
        rt::testing::writeFile(credentials.keyFile, issued.keyPem);
        auto made = rt::tls::TlsContext::forServer(credentials);
        if (!made) {
            std::abort();
        }
        return made.value();
    }();
    return context;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    rt::tls::TlsSession session(serverContext());
    const qsizetype piece = 1 + data[0] % 97;
    const QByteArrayView stream(reinterpret_cast<const char *>(data) + 1,
                                static_cast<qsizetype>(size) - 1);
    QByteArray plaintext;
    bool failed = false;
    for (qsizetype offset = 0; offset < stream.size(); offset += piece) {
        const bool ok = session.receive(
                stream.sliced(offset, std::min(piece, stream.size() - offset)), plaintext);
        if (failed && ok) {
            std::abort(); // a failed session must stay failed
        }
        failed = failed || !ok;
        // The handshake's answer (certificate chain, tickets) is small; nothing may pile up.
        if (session.pendingOutput().size() > 256 * 1024 || plaintext.size() > stream.size()) {
            std::abort();
        }
        session.consumeOutput(session.pendingOutput().size());
    }
    if (failed && session.encrypt("x")) {
        std::abort();
    }
    if (session.isEstablished()) {
        session.encrypt("HTTP/1.1 200 OK\r\n\r\n");
        session.close();
    }
    return 0;
}
