// Tests of the strict base64url codec used for every JWT part and JWK member.
#include "server/auth/base64url.h"

#include <QRandomGenerator>
#include <QTest>

class Base64UrlTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void decodes_data();
    void decodes();
    void rejects_data();
    void rejects();
    void roundTrip();
};

void Base64UrlTest::decodes_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("bytes");

    QTest::newRow("empty") << QByteArray() << QByteArray();
    QTest::newRow("one byte, unpadded") << QByteArray("YQ") << QByteArray("a");
    QTest::newRow("one byte, padded") << QByteArray("YQ==") << QByteArray("a");
    QTest::newRow("two bytes, unpadded") << QByteArray("YWI") << QByteArray("ab");
    QTest::newRow("two bytes, padded") << QByteArray("YWI=") << QByteArray("ab");
    QTest::newRow("three bytes") << QByteArray("YWJj") << QByteArray("abc");
    QTest::newRow("url alphabet") << QByteArray("_-8") << QByteArray("\xff\xef");
    QTest::newRow("JSON object") << QByteArray("eyJhIjoxfQ") << QByteArray(R"({"a":1})");
    // Like Elixir's Base.url_decode64, unused low bits need not be zero.
    QTest::newRow("non-canonical last character") << QByteArray("YR") << QByteArray("a");
}

void Base64UrlTest::decodes()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, bytes);
    const std::optional<QByteArray> decoded = rt::auth::decodeBase64Url(text);
    QVERIFY(decoded.has_value());
    QCOMPARE(*decoded, bytes);
}

void Base64UrlTest::rejects_data()
{
    QTest::addColumn<QByteArray>("text");

    QTest::newRow("length 1 mod 4") << QByteArray("Y");
    QTest::newRow("length 5") << QByteArray("YWJjZ");
    QTest::newRow("padding only") << QByteArray("=");
    QTest::newRow("four padding characters") << QByteArray("====");
    QTest::newRow("padding to wrong length") << QByteArray("YQ=");
    QTest::newRow("too much padding") << QByteArray("Y===");
    QTest::newRow("padding after a full quartet") << QByteArray("YWJj====");
    QTest::newRow("padding in the middle") << QByteArray("YQ==YQ");
    QTest::newRow("plus") << QByteArray("YW+j");
    QTest::newRow("slash") << QByteArray("YW/j");
    QTest::newRow("space") << QByteArray("YW j");
    QTest::newRow("newline") << QByteArray("YW\nj");
    QTest::newRow("percent") << QByteArray("YQ%3D");
    QTest::newRow("non-ASCII") << QByteArray("YWJ\xc3\xa9");
    QTest::newRow("NUL") << QByteArray("YW\0j", 4);
}

void Base64UrlTest::rejects()
{
    QFETCH(QByteArray, text);
    QVERIFY(!rt::auth::decodeBase64Url(text).has_value());
}

void Base64UrlTest::roundTrip()
{
    QRandomGenerator random(12345); // seeded: reproducible
    for (int length = 0; length < 70; ++length) {
        QByteArray bytes(length, '\0');
        for (char &byte : bytes) {
            byte = static_cast<char>(random.bounded(256));
        }
        const QByteArray encoded = rt::auth::encodeBase64Url(bytes);
        QVERIFY(!encoded.contains('=') && !encoded.contains('+') && !encoded.contains('/'));
        QCOMPARE(rt::auth::decodeBase64Url(encoded), std::optional<QByteArray>(bytes));
    }
}

QTEST_GUILESS_MAIN(Base64UrlTest)
#include "tst_base64url.moc"
