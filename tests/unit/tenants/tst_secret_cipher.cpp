#include "server/tenants/secret_cipher.h"

#include <QTest>

using rt::tenants::SecretCipher;
using rt::tenants::SecretPlace;

namespace {

// The keys upstream uses in config/test.exs and compose.yml
// (docs/upstream/tenants-limits-metrics.md §4.5).
const QByteArray EcbKey = QByteArrayLiteral("1234567890123456");
const QByteArray GcmKey = QByteArrayLiteral("12345678901234567890123456789012");
// Where the tests' secrets are stored; ECB and "g1:" values ignore it.
const SecretPlace Here{ "tenant-a", "jwt_secret" };

SecretCipher ecb(const QByteArray &key = EcbKey)
{
    return *SecretCipher::create(key, {}, false);
}

SecretCipher gcm(const QByteArray &ecbKey = EcbKey, const QByteArray &gcmKey = GcmKey)
{
    return *SecretCipher::create(ecbKey, gcmKey, true);
}

} // namespace

// Tests encryption at rest of tenant secrets: byte-exact with upstream's AES-128-ECB values,
// layout-exact with its AES-256-GCM "g1:" values, our "g2:" values bound to their place, and
// clear errors instead of garbage.
class SecretCipherTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void ecbMatchesUpstreamVectors_data();
    void ecbMatchesUpstreamVectors();
    void gcmDecryptsUpstreamVector();
    void gcmRoundTripsWithFreshIv();
    void readingDispatchesOnTheValue();
    void roundTripsAnyBytes_data();
    void roundTripsAnyBytes();
    void wrongEcbKeyIsAnError();
    void wrongGcmKeyIsAnError();
    void tamperedGcmIsAnError_data();
    void tamperedGcmIsAnError();
    void malformedValuesAreErrors_data();
    void malformedValuesAreErrors();
    void missingKeyForTheFormatIsAnError();
    void gcmValuesAreBoundToTheirPlace();
    void badConfigurationIsRefused_data();
    void badConfigurationIsRefused();
};

void SecretCipherTest::ecbMatchesUpstreamVectors_data()
{
    QTest::addColumn<QByteArray>("plaintext");
    QTest::addColumn<QByteArray>("stored");

    QTest::newRow("secret") << QByteArray("secret") << QByteArray("RyCVJG3NbUw4ejaukvfjuQ==");
    QTest::newRow("postgres") << QByteArray("postgres") << QByteArray("v1QVng3N+pZd/0AEObABwg==");
    QTest::newRow("127.0.0.1") << QByteArray("127.0.0.1") << QByteArray("7Wwy/7hIGy35MCo8jeVy+w==");
    QTest::newRow("5432") << QByteArray("5432") << QByteArray("m3KM2cjJ+t7C3443QcjOgA==");
    QTest::newRow("supabase_admin")
            << QByteArray("supabase_admin") << QByteArray("fUUNRi3V/4miyO1Yci7Gcg==");
    // A full block gets a whole block of padding.
    QTest::newRow("16 bytes") << QByteArray("0123456789abcdef")
                              << QByteArray("6OHXh2GUsK5DnV6DlD2ihAUBh6DN5amHLLqwkatz5VM=");
    QTest::newRow("jwt secret")
            << QByteArray("super-secret-jwt-token-with-at-least-32-characters-long")
            << QByteArray("6MP8XGjE/1JGHSbp6UzVI0UTNR3Oboy+j4mfrGaWwvTXrqM3pBTWvqtexlZVWb2rC5VC"
                          "jckdAj8cpsZFduIleA==");
}

void SecretCipherTest::ecbMatchesUpstreamVectors()
{
    QFETCH(QByteArray, plaintext);
    QFETCH(QByteArray, stored);

    const SecretCipher cipher = ecb();
    QVERIFY(!cipher.writesGcm());
    // Deterministic: byte for byte what upstream stores.
    QCOMPARE(*cipher.encrypt(plaintext, Here), stored);
    const auto plain = cipher.decrypt(stored, Here);
    QVERIFY2(plain.ok(), qPrintable(plain.ok() ? QString() : plain.error().message));
    QCOMPARE(*plain, plaintext);
    // A GCM-writing cipher still reads legacy values.
    const auto viaGcm = gcm().decrypt(stored, Here);
    QVERIFY(viaGcm.ok());
    QCOMPARE(*viaGcm, plaintext);
}

void SecretCipherTest::gcmDecryptsUpstreamVector()
{
    // IV 000102..0b, tag 3cda1a07..., ciphertext 2b310468107f: tag before ciphertext.
    const QByteArray stored = "g1:AAECAwQFBgcICQoLPNoaB6/xY2gocRTLh/zB4SsxBGgQfw==";
    const QByteArray blob = QByteArray::fromBase64(stored.mid(3));
    QCOMPARE(blob.mid(0, 12).toHex(), QByteArray("000102030405060708090a0b"));
    QCOMPARE(blob.mid(12, 16).toHex(), QByteArray("3cda1a07aff16368287114cb87fcc1e1"));
    QCOMPARE(blob.mid(28).toHex(), QByteArray("2b310468107f"));

    const auto plain = gcm().decrypt(stored, Here);
    QVERIFY2(plain.ok(), qPrintable(plain.ok() ? QString() : plain.error().message));
    QCOMPARE(*plain, QByteArray("secret"));
    // Reading never depends on DB_ENC_WRITE_GCM, only on the key being there.
    const auto readOnly = SecretCipher::create(EcbKey, GcmKey, false)->decrypt(stored, Here);
    QVERIFY(readOnly.ok());
    QCOMPARE(*readOnly, QByteArray("secret"));
}

void SecretCipherTest::gcmRoundTripsWithFreshIv()
{
    const SecretCipher cipher = gcm();
    QVERIFY(cipher.writesGcm());
    const QByteArray first = *cipher.encrypt("secret", Here);
    const QByteArray second = *cipher.encrypt("secret", Here);
    QVERIFY(first.startsWith("g2:"));
    // A random IV per value: the same plaintext never gives the same ciphertext.
    QVERIFY(first != second);
    // Layout: 12-byte IV, 16-byte tag, ciphertext as long as the plaintext.
    const auto blob =
            QByteArray::fromBase64Encoding(first.mid(3), QByteArray::AbortOnBase64DecodingErrors);
    QVERIFY(blob);
    QCOMPARE(blob.decoded.size(), qsizetype(12 + 16 + 6));
    QCOMPARE(*cipher.decrypt(first, Here), QByteArray("secret"));
    QCOMPARE(*cipher.decrypt(second, Here), QByteArray("secret"));
    // GCM-only (no DB_ENC_KEY) works for GCM values.
    const auto gcmOnly = SecretCipher::create({}, GcmKey, true);
    QVERIFY(gcmOnly.ok());
    QCOMPARE(*gcmOnly->decrypt(*gcmOnly->encrypt("x", Here), Here), QByteArray("x"));
    QCOMPARE(*gcmOnly->decrypt(first, Here), QByteArray("secret"));
}

void SecretCipherTest::readingDispatchesOnTheValue()
{
    // "g1:" and "g2:" are GCM, anything else ECB, whatever the writer's configuration.
    const SecretCipher writesEcb = *SecretCipher::create(EcbKey, GcmKey, false);
    const SecretCipher writesGcm = gcm();
    const QByteArray legacy = *writesEcb.encrypt("v", Here);
    const QByteArray modern = *writesGcm.encrypt("v", Here);
    QVERIFY(!legacy.startsWith("g1:") && !legacy.startsWith("g2:"));
    QVERIFY(modern.startsWith("g2:"));
    QCOMPARE(*writesEcb.decrypt(modern, Here), QByteArray("v"));
    QCOMPARE(*writesGcm.decrypt(legacy, Here), QByteArray("v"));
}

void SecretCipherTest::roundTripsAnyBytes_data()
{
    QTest::addColumn<QByteArray>("plaintext");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("one byte") << QByteArray("a");
    QTest::newRow("15 bytes") << QByteArray(15, 'x');
    QTest::newRow("17 bytes") << QByteArray(17, 'y');
    QTest::newRow("binary") << QByteArray("\x00\x01\xff\x10\x10", 5);
    QTest::newRow("utf-8") << QByteArray("caf\xc3\xa9 \xe2\x98\x83");
    QTest::newRow("long") << QByteArray(4096, 'z');
}

void SecretCipherTest::roundTripsAnyBytes()
{
    QFETCH(QByteArray, plaintext);
    for (const SecretCipher &cipher : { ecb(), gcm() }) {
        const QByteArray stored = *cipher.encrypt(plaintext, Here);
        const auto plain = cipher.decrypt(stored, Here);
        QVERIFY2(plain.ok(), qPrintable(plain.ok() ? QString() : plain.error().message));
        QCOMPARE(*plain, plaintext);
    }
}

void SecretCipherTest::wrongEcbKeyIsAnError()
{
    // Upstream returns garbage for a wrong ECB key; the padding check turns it into an error.
    const SecretCipher wrong = ecb(QByteArrayLiteral("6543210987654321"));
    for (const QByteArray &stored :
         { QByteArray("RyCVJG3NbUw4ejaukvfjuQ=="), QByteArray("v1QVng3N+pZd/0AEObABwg=="),
           QByteArray("6OHXh2GUsK5DnV6DlD2ihAUBh6DN5amHLLqwkatz5VM=") }) {
        const auto plain = wrong.decrypt(stored, Here);
        QVERIFY2(!plain.ok(), stored.constData());
        QVERIFY2(plain.error().message.contains(QLatin1String("DB_ENC_KEY")),
                 qPrintable(plain.error().message));
    }
}

void SecretCipherTest::wrongGcmKeyIsAnError()
{
    const QByteArray stored = *gcm().encrypt("secret", Here);
    const SecretCipher other = gcm(EcbKey, QByteArray(32, 'k'));
    const auto plain = other.decrypt(stored, Here);
    QVERIFY(!plain.ok());
    QCOMPARE(plain.error().message,
             QStringLiteral("GCM decryption failed: ciphertext or authentication tag is invalid"));
}

void SecretCipherTest::tamperedGcmIsAnError_data()
{
    QTest::addColumn<int>("offset"); // byte of IV || TAG || CIPHERTEXT to flip
    QTest::newRow("iv") << 0;
    QTest::newRow("tag first byte") << 12;
    QTest::newRow("tag last byte") << 27;
    QTest::newRow("ciphertext") << 28;
    QTest::newRow("ciphertext last byte") << 33;
}

void SecretCipherTest::tamperedGcmIsAnError()
{
    QFETCH(int, offset);
    const SecretCipher cipher = gcm();
    QByteArray blob = QByteArray::fromBase64("AAECAwQFBgcICQoLPNoaB6/xY2gocRTLh/zB4SsxBGgQfw==");
    QCOMPARE(*cipher.decrypt("g1:" + blob.toBase64(), Here), QByteArray("secret"));
    blob[offset] = static_cast<char>(blob.at(offset) ^ 0x01);
    const auto plain = cipher.decrypt("g1:" + blob.toBase64(), Here);
    QVERIFY(!plain.ok());
    QCOMPARE(plain.error().message,
             QStringLiteral("GCM decryption failed: ciphertext or authentication tag is invalid"));
}

void SecretCipherTest::malformedValuesAreErrors_data()
{
    QTest::addColumn<QByteArray>("stored");
    QTest::newRow("plain text") << QByteArray("not base64!");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("not a block multiple") << QByteArray("YWJj"); // "abc"
    QTest::newRow("gcm not base64") << QByteArray("g1:***");
    QTest::newRow("gcm too short") << QByteArray("g1:AAECAwQF");
    QTest::newRow("gcm empty") << QByteArray("g1:");
    QTest::newRow("bound gcm not base64") << QByteArray("g2:***");
    QTest::newRow("bound gcm too short") << QByteArray("g2:AAECAwQF");
    QTest::newRow("bound gcm empty") << QByteArray("g2:");
}

void SecretCipherTest::malformedValuesAreErrors()
{
    QFETCH(QByteArray, stored);
    const auto plain = gcm().decrypt(stored, Here);
    QVERIFY(!plain.ok());
    QVERIFY(!plain.error().message.isEmpty());
    QVERIFY(!plain.error().message.contains(u'\n'));
}

void SecretCipherTest::missingKeyForTheFormatIsAnError()
{
    const auto noGcm = ecb().decrypt("g1:AAECAwQFBgcICQoLPNoaB6/xY2gocRTLh/zB4SsxBGgQfw==", Here);
    QVERIFY(!noGcm.ok());
    QVERIFY2(noGcm.error().message.contains(QLatin1String("DB_ENC_KEY_GCM")),
             qPrintable(noGcm.error().message));
    const auto noEcb =
            SecretCipher::create({}, GcmKey, true)->decrypt("RyCVJG3NbUw4ejaukvfjuQ==", Here);
    QVERIFY(!noEcb.ok());
    QVERIFY2(noEcb.error().message.contains(QLatin1String("DB_ENC_KEY")),
             qPrintable(noEcb.error().message));
}

void SecretCipherTest::gcmValuesAreBoundToTheirPlace()
{
    const SecretCipher cipher = gcm();
    const QByteArray stored = *cipher.encrypt("secret", Here);
    const QString failed =
            QStringLiteral("GCM decryption failed: ciphertext or authentication tag is invalid");
    // Moved to another tenant's row or into another field: refused, not decrypted.
    for (const SecretPlace elsewhere :
         { SecretPlace{ "tenant-b", "jwt_secret" }, SecretPlace{ "tenant-a", "db_password" },
           SecretPlace{ "tenant-aj", "wt_secret" }, SecretPlace{ "", "jwt_secret" } }) {
        const auto plain = cipher.decrypt(stored, elsewhere);
        QVERIFY(!plain.ok());
        QCOMPARE(plain.error().message, failed);
    }
    // Relabelled as upstream's unbound format, it does not decrypt either.
    QVERIFY(!cipher.decrypt("g1:" + stored.mid(3), Here).ok());
    // Values written without associated data (upstream's "g1:", ECB) read in any place.
    const QByteArray upstream = "g1:AAECAwQFBgcICQoLPNoaB6/xY2gocRTLh/zB4SsxBGgQfw==";
    QCOMPARE(*cipher.decrypt(upstream, SecretPlace{ "anyone", "db_host" }), QByteArray("secret"));
    QCOMPARE(*cipher.decrypt("RyCVJG3NbUw4ejaukvfjuQ==", SecretPlace{ "x", "y" }),
             QByteArray("secret"));
}

void SecretCipherTest::badConfigurationIsRefused_data()
{
    QTest::addColumn<QByteArray>("ecbKey");
    QTest::addColumn<QByteArray>("gcmKey");
    QTest::addColumn<bool>("writeGcm");
    QTest::addColumn<QString>("message");

    QTest::newRow("short ecb key")
            << QByteArray("short") << QByteArray() << false
            << QStringLiteral("DB_ENC_KEY must be exactly 16 bytes (AES-128), got 5");
    QTest::newRow("long ecb key")
            << QByteArray(17, 'k') << QByteArray() << false
            << QStringLiteral("DB_ENC_KEY must be exactly 16 bytes (AES-128), got 17");
    // Upstream's boot message.
    QTest::newRow("short gcm key")
            << EcbKey << QByteArray(31, 'k') << true
            << QStringLiteral(
                       "DB_ENC_KEY_GCM must be exactly 32 bytes for AES-256-GCM, got 31 bytes");
    QTest::newRow("gcm writes without gcm key")
            << EcbKey << QByteArray() << true
            << QStringLiteral("DB_ENC_WRITE_GCM needs DB_ENC_KEY_GCM");
    QTest::newRow("no key at all")
            << QByteArray() << QByteArray() << false
            << QStringLiteral("DB_ENC_KEY is required to encrypt tenant secrets");
}

void SecretCipherTest::badConfigurationIsRefused()
{
    QFETCH(QByteArray, ecbKey);
    QFETCH(QByteArray, gcmKey);
    QFETCH(bool, writeGcm);
    QFETCH(QString, message);

    const auto cipher = SecretCipher::create(ecbKey, gcmKey, writeGcm);
    QVERIFY(!cipher.ok());
    QCOMPARE(cipher.error().message, message);
}

QTEST_GUILESS_MAIN(SecretCipherTest)
#include "tst_secret_cipher.moc"
