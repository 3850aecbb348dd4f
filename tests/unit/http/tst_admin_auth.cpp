#include "server/auth/jwt.h"
#include "server/http/admin_auth.h"
#include "server/http/tenant_routes.h"
#include "shared/core/clock.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

using namespace rt;
using rt::http::AdminAuth;

namespace {

const QByteArray Secret = QByteArrayLiteral("operator-secret-0123456789abcdefghijkl");
const QByteArray NextSecret = QByteArrayLiteral("next-operator-secret-0123456789abcdefgh");
constexpr qint64 Now = 1'700'000'000;

wire::HttpRequest withAuthorization(const QList<QByteArray> &values)
{
    wire::HttpRequest request;
    request.method = "GET";
    request.path = "/api/tenants";
    for (const QByteArray &value : values) {
        request.headers.append({ QByteArrayLiteral("authorization"), value });
    }
    return request;
}

QByteArray sign(const QJsonObject &claims, const QByteArray &secret = Secret,
                auth::HmacAlgorithm algorithm = auth::HmacAlgorithm::HS256)
{
    return auth::signHmac(claims, secret, algorithm);
}

} // namespace

class AdminAuthTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void acceptsSignedTokenWithoutRoleOrExp();
    void acceptsEveryHmacAlgorithmAndTheNextSecret();
    void refusesWrongSchemesAndHeaders();
    void refusesExpiredForeignAndBlockedTokens();
    void upgradesTakeTheHeaderOrTheApikeyParameter();
    void cleansTheTokenLikeUpstream();
    void claimValidatorsApply();
    void operatorRolesAreRequiredWhenConfigured();
    void withoutSecretsEverythingIsRefused();
    void refusalIsAnEmpty403();
    void blocklistParsing();
    void acceptHeaderNegotiation();

private:
    ManualClock m_clock{ Now * 1000 };
};

void AdminAuthTest::acceptsSignedTokenWithoutRoleOrExp()
{
    const AdminAuth auth({ Secret }, {}, {}, {}, m_clock);
    QVERIFY(auth.isConfigured());
    QVERIFY(auth.authorises(withAuthorization({ "Bearer " + sign({}) })));
    QVERIFY(auth.authorises(
            withAuthorization({ "Bearer " + sign({ { QStringLiteral("exp"), Now + 60 } }) })));
}

void AdminAuthTest::acceptsEveryHmacAlgorithmAndTheNextSecret()
{
    const AdminAuth auth({ Secret, NextSecret }, {}, {}, {}, m_clock);
    for (const auto algorithm :
         { auth::HmacAlgorithm::HS256, auth::HmacAlgorithm::HS384, auth::HmacAlgorithm::HS512 }) {
        QVERIFY(auth.authorises(withAuthorization({ "Bearer " + sign({}, Secret, algorithm) })));
    }
    QVERIFY(auth.authorises(withAuthorization({ "Bearer " + sign({}, NextSecret) })));
    // An empty secret is dropped, not accepted as "any token signed with nothing".
    const AdminAuth emptyNext({ Secret, QByteArray() }, {}, {}, {}, m_clock);
    QVERIFY(!emptyNext.authorises(withAuthorization({ "Bearer " + sign({}, QByteArray("x")) })));
}

void AdminAuthTest::refusesWrongSchemesAndHeaders()
{
    const AdminAuth auth({ Secret }, {}, {}, {}, m_clock);
    const QByteArray token = sign({});
    QVERIFY(!auth.authorises(withAuthorization({})));
    QVERIFY(!auth.authorises(withAuthorization({ "bearer " + token })));
    QVERIFY(!auth.authorises(withAuthorization({ "BEARER " + token })));
    QVERIFY(!auth.authorises(withAuthorization({ "Basic " + token })));
    QVERIFY(!auth.authorises(withAuthorization({ token })));
    QVERIFY(!auth.authorises(withAuthorization({ "Bearer " })));
    // Exactly one Authorization header.
    QVERIFY(!auth.authorises(withAuthorization({ "Bearer " + token, "Bearer " + token })));
}

void AdminAuthTest::refusesExpiredForeignAndBlockedTokens()
{
    const QByteArray blocked = sign({ { QStringLiteral("sub"), QStringLiteral("leaked") } });
    const AdminAuth auth({ Secret }, { blocked }, {}, {}, m_clock);
    QVERIFY(!auth.authorises(
            withAuthorization({ "Bearer " + sign({ { QStringLiteral("exp"), Now - 1 } }) })));
    QVERIFY(!auth.authorises(withAuthorization({ "Bearer " + sign({}, NextSecret) })));
    QVERIFY(!auth.authorises(withAuthorization({ "Bearer " + blocked })));
    QVERIFY(!auth.authorises(withAuthorization({ "Bearer not-a-jwt" })));
    QVERIFY(auth.authorises(withAuthorization({ "Bearer " + sign({}) })));
}

void AdminAuthTest::upgradesTakeTheHeaderOrTheApikeyParameter()
{
    const QByteArray blocked = sign({ { QStringLiteral("sub"), QStringLiteral("leaked") } });
    const AdminAuth auth({ Secret }, { blocked }, {}, {}, m_clock);
    const QByteArray token = sign({});
    const auto upgrade = [](const QByteArray &query, const QList<QByteArray> &authorization) {
        wire::HttpRequest request = withAuthorization(authorization);
        request.path = "/api/admin/live/websocket";
        request.query = query;
        return request;
    };
    QVERIFY(auth.authorisesUpgrade(upgrade("vsn=1.0.0", { "Bearer " + token })));
    QVERIFY(auth.authorisesUpgrade(upgrade("vsn=1.0.0&apikey=" + token, {})));
    QVERIFY(!auth.authorisesUpgrade(upgrade("vsn=1.0.0", {})));
    QVERIFY(!auth.authorisesUpgrade(upgrade("apikey=", {})));
    QVERIFY(!auth.authorisesUpgrade(upgrade("apikey=not-a-jwt", {})));
    QVERIFY(!auth.authorisesUpgrade(upgrade("apikey=" + sign({}, NextSecret), {})));
    QVERIFY(!auth.authorisesUpgrade(upgrade("apikey=" + blocked, {})));
    // A header, when present, decides: a bad one is not rescued by a good parameter.
    QVERIFY(!auth.authorisesUpgrade(upgrade("apikey=" + token, { "Bearer bad" })));
    // The plain request check never looks at the query.
    QVERIFY(!auth.authorises(upgrade("apikey=" + token, {})));
}

void AdminAuthTest::cleansTheTokenLikeUpstream()
{
    const AdminAuth auth({ Secret }, {}, {}, {}, m_clock);
    QByteArray token = sign({});
    // URL-encoded and with whitespace inside: decoded and stripped before verification.
    QByteArray encoded = token;
    encoded.replace('.', "%2E");
    QVERIFY(auth.authorises(withAuthorization({ "Bearer " + encoded })));
    token.insert(10, " \n ");
    QVERIFY(auth.authorises(withAuthorization({ "Bearer " + token })));
}

void AdminAuthTest::claimValidatorsApply()
{
    const AdminAuth auth({ Secret }, {},
                         QJsonObject{ { QStringLiteral("iss"), QStringLiteral("ops") } }, {},
                         m_clock);
    QVERIFY(auth.authorises(withAuthorization(
            { "Bearer " + sign({ { QStringLiteral("iss"), QStringLiteral("ops") } }) })));
    QVERIFY(!auth.authorises(withAuthorization(
            { "Bearer " + sign({ { QStringLiteral("iss"), QStringLiteral("other") } }) })));
}

void AdminAuthTest::operatorRolesAreRequiredWhenConfigured()
{
    const AdminAuth auth({ Secret }, {}, {},
                         { QStringLiteral("service_role"), QStringLiteral("supabase_admin") },
                         m_clock);
    const auto withRole = [](const QJsonValue &role) -> QByteArray {
        return "Bearer " + sign({ { QStringLiteral("role"), role } });
    };
    QVERIFY(auth.authorises(withAuthorization({ withRole(QStringLiteral("service_role")) })));
    QVERIFY(auth.authorises(withAuthorization({ withRole(QStringLiteral("supabase_admin")) })));
    // The self-host tenant's client tokens share the secret: their roles are refused.
    QVERIFY(!auth.authorises(withAuthorization({ withRole(QStringLiteral("anon")) })));
    QVERIFY(!auth.authorises(withAuthorization({ withRole(QStringLiteral("authenticated")) })));
    QVERIFY(!auth.authorises(withAuthorization({ withRole(QStringLiteral("Service_Role")) })));
    QVERIFY(!auth.authorises(withAuthorization({ withRole(QJsonValue(1)) })));
    QVERIFY(!auth.authorises(
            withAuthorization({ withRole(QJsonArray{ QStringLiteral("service_role") }) })));
    QVERIFY(!auth.authorises(withAuthorization({ "Bearer " + sign({}) })));
    // The live feed's upgrade applies the same rule to the apikey parameter.
    wire::HttpRequest upgrade = withAuthorization({});
    upgrade.query =
            "vsn=1.0.0&apikey=" + sign({ { QStringLiteral("role"), QStringLiteral("anon") } });
    QVERIFY(!auth.authorisesUpgrade(upgrade));
    upgrade.query = "vsn=1.0.0&apikey="
            + sign({ { QStringLiteral("role"), QStringLiteral("service_role") } });
    QVERIFY(auth.authorisesUpgrade(upgrade));
}

void AdminAuthTest::withoutSecretsEverythingIsRefused()
{
    const AdminAuth auth({ QByteArray(), QByteArray() }, {}, {}, {}, m_clock);
    QVERIFY(!auth.isConfigured());
    QVERIFY(!auth.authorises(withAuthorization({ "Bearer " + sign({}, QByteArray()) })));
}

void AdminAuthTest::refusalIsAnEmpty403()
{
    const wire::HttpResponse refusal = AdminAuth::refusal();
    QCOMPARE(refusal.status, 403);
    QVERIFY(refusal.body.isEmpty());
    for (const auto &[name, value] : refusal.headers) {
        QVERIFY2(name.toLower() != "content-type", value.constData());
    }
}

void AdminAuthTest::blocklistParsing()
{
    QCOMPARE(AdminAuth::parseBlocklist(" a, b ,,c "),
             (QList<QByteArray>{ QByteArrayLiteral("a"), QByteArrayLiteral("b"),
                                 QByteArrayLiteral("c") }));
    QVERIFY(AdminAuth::parseBlocklist("").isEmpty());
}

void AdminAuthTest::acceptHeaderNegotiation()
{
    QVERIFY(http::acceptsJson(QByteArray()));
    QVERIFY(http::acceptsJson("*/*"));
    QVERIFY(http::acceptsJson("application/json"));
    QVERIFY(http::acceptsJson("text/html, application/json;q=0.9"));
    QVERIFY(http::acceptsJson("application/*"));
    QVERIFY(!http::acceptsJson("text/html"));
    QVERIFY(!http::acceptsJson("text/plain, text/html"));
}

QTEST_GUILESS_MAIN(AdminAuthTest)
#include "tst_admin_auth.moc"
