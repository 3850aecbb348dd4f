// libFuzzer target for the JWT verifier: token bytes reach it straight from clients (socket
// `apikey`, join `access_token`, HTTP headers) and JWKS documents come from tenant
// configuration. Inputs starting with '{' are JWKS documents: KeySet::build parses them and
// fixed valid tokens are verified against the result (hostile keys, kid collisions). Every
// other input is a token: verified raw and after cleanToken against a fixed KeySet holding an
// HS secret and RSA, EC (P-256/384/521), OKP (Ed25519/Ed448, plus an X25519 decoy) and oct
// JWKs, under both claim policies. Besides crashes, the target aborts when a success breaks
// the documented promises (exp in the future, role/exp present when required).
//
// The seed corpus holds tokens of every algorithm signed with the private halves of the keys
// below (generated once with tests/support/jwt; the private keys were not kept). To add seeds
// that must verify, use the HS secret or the oct secret, which are both listed here.
#include "server/auth/jwt.h"

#include <QJsonArray>
#include <QJsonObject>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

constexpr qint64 Now = 1'700'000'000; // seed tokens expire at 2'000'000'000
const char JwtSecret[] = "fuzz-jwt-secret-0123456789abcdef";
// oct-1 is base64url("fuzz-oct-secret").
const char Jwks[] =
        R"({"keys":[{"k":"ZnV6ei1vY3Qtc2VjcmV0","kid":"oct-1","kty":"oct"},{"e":"AQAB","kid":"rsa-1)"
        R"(","kty":"RSA","n":"oyC1j5u3DANG6pLlJIgEdWvn_d4ByM0GEKm8igYy8RtYYm1MrzbniuQhXXp3Ukn-fUjGZ)"
        R"(KNTkHSkHG0NU7wRFs0OY1HR3ciaSLIWWPMnjvYMmPuRUh29rMIcR3e94f72IacRVDZkFV7pRLXSrcx15DB4XEniT)"
        R"(mNUb9624WFKwRkfXX7QmiPZpsl910kiukzxicOo7AzlLTQ-9Q5hYoCISoLw-5KNb3VHOwzaEY8OOfWRukh1ekQUN)"
        R"(1bDcPaOuH8CuZI-cODLqKIW7xSEkDR-W6Da-PLS5pPc2use5lKdstvTqrJbvy-FXc8wGdapSD8lioGAhx-P-AtOx)"
        R"(G763bAaEQ"},{"crv":"P-256","kid":"ec256-1","kty":"EC","x":"ewp_wZ9tK7LXePG5UrNXCxZWzEu51)"
        R"(1CPB06GMkx9X88","y":"vKQIlEJmfON5BWU4scFULpIzixEDq3XPREaohaey4l4"},{"crv":"P-384","kid":)"
        R"("ec384-1","kty":"EC","x":"zJw79hDSvWeBSCqn3TdIaJYOE7eSer0tjEoHtshJZK46QL-2utlzOWnX5gH9OD)"
        R"(h9","y":"MVU8M5tV1-Ikf5MuAQDx0HlpG5ClzM-mIv-vRQur9GF4yBzD81qkLGZcKBQBpuIE"},{"crv":"P-52)"
        R"(1","kid":"ec521-1","kty":"EC","x":"AQ--95bbo1938EEWIDh4-oB-bklaH39xkgBIs9TKCibFRhVAuo7b1)"
        R"(NHxMW2n6VFS6x8AZR910gSgqhL2_aaZ_Got","y":"AKLJMmvXVXgF1ZOes-58iM-KEA2wM-Bs7xwaAEQg_xBwWW)"
        R"(1WCG5inq9UUJQGAcTIAaguVLm5HRTA6NTy_1eJ8Ifl"},{"crv":"Ed25519","kid":"ed25519-1","kty":"O)"
        R"(KP","x":"wIz1ItNcRPNuFEjCJQ59c9Sgc3TGj9Zmn36XREQMBg4"},{"crv":"Ed448","kid":"ed448-1","k)"
        R"(ty":"OKP","x":"1-mi6BQAlaHvSqLz13sMmTEgix0_VOsKtf6Juy1iy1hn6VlfU841uVwlZu9JMxGvF09wC8vO3)"
        R"(_EA"},{"crv":"X25519","kid":"x25519-1","kty":"OKP","x":"hR5rgn8NeZtkO6c5zBqQWFskBWnkBGa8)"
        R"(c1Noa1L7FRw"}]})";

// Valid tokens (HS256 via oct-1, RS256, ES256, ES512, EdDSA/Ed25519, Ed448) for JWKS inputs.
const char Token0[] =
        R"(eyJhbGciOiJIUzI1NiIsImtpZCI6Im9jdC0xIiwidHlwIjoiSldUIn0.eyJleHAiOjIwMDAwMDAwMDAsImlzcyI6)"
        R"(ImZ1enotaXNzdWVyIiwicm9sZSI6ImF1dGhlbnRpY2F0ZWQiLCJzdWIiOiJ1c2VyLTEifQ.Usbg6wlzTE-s6M3Vt)"
        R"(JtWzO1efCIMbHK-ABfsEyDRiE0)";
const char Token1[] =
        R"(eyJhbGciOiJSUzI1NiIsImtpZCI6InJzYS0xIiwidHlwIjoiSldUIn0.eyJleHAiOjIwMDAwMDAwMDAsImlzcyI6)"
        R"(ImZ1enotaXNzdWVyIiwicm9sZSI6ImF1dGhlbnRpY2F0ZWQiLCJzdWIiOiJ1c2VyLTEifQ.TUaJR10j28D5i-aXj)"
        R"(zrBzVaKcSir6R-JYUGQILJjcBcY65MDIV7c7QOAGsfUFvTfR1jtLp1tjMPsh45Rdnr9OddxdwuKsluHgH50D6xII)"
        R"(yHhv1CzbIbtaS3u_EliWB-J7_j61Y7-WYYWPYONQvh09ClbSXsQ052o3SVMZi0ojjiPG2lTRd0cBBZdROvZVQW3L)"
        R"(Nuuh2yXfYs7rAPVZroWJ4OJ4iE0z4UnyfUcMAdnYT5yF21awL4EdLjGpzAYrenT4rlvMuWgyWGHD3Xeq6v-QJHVE)"
        R"(mt3ffdPaFQB2Cc1oDtnljVCfOjFsxd5sdu1lYbanH5GTLTA5r6m_CRC636cfw)";
const char Token2[] =
        R"(eyJhbGciOiJFUzI1NiIsImtpZCI6ImVjMjU2LTEiLCJ0eXAiOiJKV1QifQ.eyJleHAiOjIwMDAwMDAwMDAsImlzc)"
        R"(yI6ImZ1enotaXNzdWVyIiwicm9sZSI6ImF1dGhlbnRpY2F0ZWQiLCJzdWIiOiJ1c2VyLTEifQ.SY4lFX9GUIHR8k)"
        R"(cY61j72AizJk_0eTSBfehGijgS2CEAtC4gFmGYj9wO2Icnwu_qiUAK4aaF_J3jrgy-9Kg4Vg)";
const char Token3[] =
        R"(eyJhbGciOiJFUzUxMiIsImtpZCI6ImVjNTIxLTEiLCJ0eXAiOiJKV1QifQ.eyJleHAiOjIwMDAwMDAwMDAsImlzc)"
        R"(yI6ImZ1enotaXNzdWVyIiwicm9sZSI6ImF1dGhlbnRpY2F0ZWQiLCJzdWIiOiJ1c2VyLTEifQ.AN5rM_7R4F-Dur)"
        R"(xOHJVd9o4OxSMLkDJD1y8IXVpAiT_xEclMDNh7eUKE7aMlLIuSoDKEmCwmOkumoi5R3it_mFAVAWVHZ_T4aZ_PbJ)"
        R"(sPpGGIuwQ6_AwUrrlSZtTUFW9peXMfTduLs5P9qQEIK2clDVVja2pt_vpfBm98lN2lQIYaS9lc)";
const char Token4[] =
        R"(eyJhbGciOiJFZERTQSIsImtpZCI6ImVkMjU1MTktMSIsInR5cCI6IkpXVCJ9.eyJleHAiOjIwMDAwMDAwMDAsIml)"
        R"(zcyI6ImZ1enotaXNzdWVyIiwicm9sZSI6ImF1dGhlbnRpY2F0ZWQiLCJzdWIiOiJ1c2VyLTEifQ.lvtzsCTtLD8a)"
        R"(VlVBoCSTk8TwlOAPL63XHBCjiP8zfZslF6cV6uQZhKPdt4NLirq5gt05UzYFrlzMT3ELSzsxDw)";
const char Token5[] =
        R"(eyJhbGciOiJFZDQ0OCIsImtpZCI6ImVkNDQ4LTEiLCJ0eXAiOiJKV1QifQ.eyJleHAiOjIwMDAwMDAwMDAsImlzc)"
        R"(yI6ImZ1enotaXNzdWVyIiwicm9sZSI6ImF1dGhlbnRpY2F0ZWQiLCJzdWIiOiJ1c2VyLTEifQ.yIeY7Y3MqfkYLm)"
        R"(QA3UQ-mGgyV6IgLbRMKdyL5CdZVQig4m0ypLuIONBi9SCw-OTkwAYV5PTIhM-Am_juKX78Bl2f26NSyaYtYpZ0V-)"
        R"(9iu1vJ3zJMgVheUu-uRavfP1YSMvKJ038dLSSEG1oOmgzgWTkA)";

const char *const FixedTokens[] = { Token0, Token1, Token2, Token3, Token4, Token5 };

const rt::auth::KeySet &fixedKeys()
{
    static const std::shared_ptr<const rt::auth::KeySet> keys = [] {
        auto built = rt::auth::KeySet::build(QByteArray(JwtSecret), QByteArray(Jwks));
        if (!built.ok()) {
            std::abort(); // the embedded JWKS is valid; failing here is a harness bug
        }
        return *built;
    }();
    return *keys;
}

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

void verifyUnderBothPolicies(QByteArrayView token, const rt::auth::KeySet &keys)
{
    rt::auth::VerifyOptions socket;
    socket.nowSeconds = Now;
    socket.requireRoleAndExp = true;
    socket.claimValidators =
            QJsonObject{ { QStringLiteral("iss"), QStringLiteral("fuzz-issuer") },
                         { QStringLiteral("aud"), QJsonArray{ QStringLiteral("a") } } };
    rt::auth::VerifyOptions management;
    management.nowSeconds = Now;
    management.requireRoleAndExp = false;

    for (const rt::auth::VerifyOptions *options : { &socket, &management }) {
        const auto result = rt::auth::verifyToken(token, keys, *options);
        if (result.ok()) {
            require(!result->exp || *result->exp > Now);
            if (options->requireRoleAndExp) {
                require(result->exp.has_value());
                require(result->claims.contains(QStringLiteral("role")));
            }
        } else {
            const rt::auth::JwtError &error = result.error();
            const int status = error.httpStatus();
            require(status == 401 || status == 500);
            require(!error.connectMessage().isEmpty());
            require(!error.joinReason().isEmpty());
            require(!error.shutdownMessage().isEmpty());
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView input(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    if (input.startsWith('{')) {
        const auto keys = rt::auth::KeySet::build(QByteArray(JwtSecret), input.toByteArray());
        if (keys.ok()) {
            for (const char *token : FixedTokens) {
                verifyUnderBothPolicies(QByteArrayView(token), **keys);
            }
        }
        return 0;
    }
    verifyUnderBothPolicies(input, fixedKeys());
    const QByteArray cleaned = rt::auth::cleanToken(input);
    require(cleaned.size() <= input.size());
    verifyUnderBothPolicies(cleaned, fixedKeys());
    return 0;
}
