#include "server/auth/jwt.h"

#include "server/auth/base64url.h"
#include "server/auth/jws.h"
#include "shared/core/hex.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <QStringBuilder>
#include <QtNumeric>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

using namespace Qt::StringLiterals;

namespace rt::auth {

// The parsed JWKS of one tenant. Written only inside KeySet::build, read-only afterwards, which
// is what makes a shared KeySet safe to use from several threads.
struct KeySet::Data
{
    // An oct JWK with a string `k`. `secret` is empty when `k` is not base64url (or decodes to
    // nothing): selecting such a key is a signer error for its kid, as in the reference server.
    struct OctKey
    {
        QString kid;
        std::optional<QByteArray> secret;
    };
    struct AsymmetricKey
    {
        QString kid;
        PublicKey key;
    };

    QByteArray jwtSecret;
    bool hasJwks = false; // a JWKS object was configured, even one with no usable keys
    std::vector<OctKey> octKeys; // JWKS order: the first key with a matching kid wins
    std::vector<AsymmetricKey> asymmetricKeys;
};

namespace {

const QString InvalidJwtText = u"The token provided is not a valid JWT"_s;
const QString MissingClaimsText = u"Fields `role` and `exp` are required in JWT"_s;
const QString InvalidExpirationText = u"Token expiration time is invalid"_s;
const QString SignatureText = u"Failed to validate JWT signature"_s;
const QString NoSignerText =
        u"Failed to generate JWT signer, check your JWT secret or JWKS configuration"_s;

JwtError makeError(JwtErrorCode code)
{
    JwtError error;
    error.code = code;
    return error;
}

// ---------------------------------------------------------------------------------------------
// The kid in "Failed to generate JWT signer for key ID (kid) ..." is rendered by Elixir's
// inspect/1, so clients see e.g. "abc" with quotes and backslash escapes. This reproduces its
// rules for strings: printable text is quoted and escaped (first 4096 characters, then
// `" <> ...`), anything with other control characters is shown as a byte list.

constexpr qsizetype InspectPrintableLimit = 4096;
constexpr qsizetype InspectByteLimit = 50;

bool isElixirPrintable(char32_t c)
{
    return (c >= 0x20 && c <= 0x7E) || c == U'\n' || c == U'\r' || c == U'\t' || c == 0x0B
            || c == 0x08 || c == 0x0C || c == 0x1B || c == 0x7F || c == 0x07
            || (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD)
            || (c >= 0x10000 && c <= 0x10FFFF);
}

QString escapedChar(char32_t c)
{
    switch (c) {
    case U'"':
        return u"\\\""_s;
    case U'\\':
        return u"\\\\"_s;
    case 0x07:
        return u"\\a"_s;
    case 0x08:
        return u"\\b"_s;
    case 0x7F:
        return u"\\d"_s;
    case 0x1B:
        return u"\\e"_s;
    case 0x0C:
        return u"\\f"_s;
    case U'\n':
        return u"\\n"_s;
    case U'\r':
        return u"\\r"_s;
    case U'\t':
        return u"\\t"_s;
    case 0x0B:
        return u"\\v"_s;
    case 0xFEFF:
        return u"\\uFEFF"_s;
    default:
        break;
    }
    return QString::fromUcs4(&c, 1);
}

QString elixirInspect(const QString &text)
{
    const QList<uint> codePoints = text.toUcs4();
    const qsizetype checked = std::min(codePoints.size(), InspectPrintableLimit);
    bool printable = true;
    for (qsizetype i = 0; i < checked && printable; ++i) {
        printable = isElixirPrintable(codePoints.at(i));
    }
    if (!printable) {
        const QByteArray utf8 = text.toUtf8();
        QString list = u"<<"_s;
        const qsizetype shown = std::min(utf8.size(), InspectByteLimit);
        for (qsizetype i = 0; i < shown; ++i) {
            if (i > 0) {
                list += u", "_s;
            }
            list += QString::number(static_cast<unsigned char>(utf8.at(i)));
        }
        if (utf8.size() > shown) {
            list += u", ..."_s;
        }
        return list + u">>"_s;
    }
    QString quoted = u"\""_s;
    qsizetype i = 0;
    for (; i < checked; ++i) {
        const char32_t c = codePoints.at(i);
        if (c == U'#' && i + 1 < codePoints.size() && codePoints.at(i + 1) == U'{') {
            quoted += u"\\#{"_s;
            ++i;
            continue;
        }
        quoted += escapedChar(c);
    }
    quoted += u"\""_s;
    if (i < codePoints.size()) {
        quoted += u" <> ..."_s;
    }
    return quoted;
}

QString noSignerForKidText(const QString &kid)
{
    return u"Failed to generate JWT signer for key ID (kid) "_s % elixirInspect(kid)
            % u", check your JWT secret or JWKS configuration"_s;
}

QString expiredText(qint64 secondsAgo)
{
    return u"Token has expired "_s % QString::number(secondsAgo) % u" seconds ago"_s;
}

// ---------------------------------------------------------------------------------------------
// JSON helpers

// Parses any JSON value, not only objects and arrays (QJsonDocument's limit), so that a payload
// such as `123` counts as "valid JSON but not an object" like in the reference server.
std::optional<QJsonValue> parseJsonValue(const QByteArray &text)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson('[' + text + ']', &error);
    if (error.error != QJsonParseError::NoError || !document.isArray()
        || document.array().size() != 1) {
        return std::nullopt;
    }
    return document.array().at(0);
}

// A JSON number as the reference server sees it after decoding: integers stay exact, other
// values are doubles. Qt keeps no trace of "1.0" vs "1", so whole doubles count as integers.
struct JsonNumber
{
    bool isInteger = false;
    qint64 integer = 0;
    double real = 0;
};

std::optional<JsonNumber> readNumber(const QJsonValue &value)
{
    if (!value.isDouble()) {
        return std::nullopt;
    }
    JsonNumber number;
    number.real = value.toDouble();
    // toInteger() returns its default when the value is not an exactly representable qint64;
    // asking twice with different defaults tells that case apart from a real value.
    const qint64 first = value.toInteger(0);
    const qint64 second = value.toInteger(1);
    if (first == second) {
        number.isInteger = true;
        number.integer = first;
    }
    return number;
}

// Elixir's round/1 (half away from zero), saturated to qint64.
qint64 roundToSeconds(const JsonNumber &number)
{
    if (number.isInteger) {
        return number.integer;
    }
    constexpr double Limit = 9.2e18;
    if (number.real >= Limit) {
        return std::numeric_limits<qint64>::max();
    }
    if (number.real <= -Limit) {
        return std::numeric_limits<qint64>::min();
    }
    return static_cast<qint64>(std::llround(number.real));
}

// Elixir `==` on decoded JSON: numbers compare by value (1 == 1.0), containers structurally.
bool jsonEquals(const QJsonValue &a, const QJsonValue &b)
{
    if (a.isDouble() && b.isDouble()) {
        const JsonNumber x = *readNumber(a);
        const JsonNumber y = *readNumber(b);
        if (x.isInteger && y.isInteger) {
            return x.integer == y.integer;
        }
        return x.real == y.real;
    }
    if (a.type() != b.type()) {
        return false;
    }
    switch (a.type()) {
    case QJsonValue::Array: {
        const QJsonArray left = a.toArray();
        const QJsonArray right = b.toArray();
        if (left.size() != right.size()) {
            return false;
        }
        for (qsizetype i = 0; i < left.size(); ++i) {
            if (!jsonEquals(left.at(i), right.at(i))) {
                return false;
            }
        }
        return true;
    }
    case QJsonValue::Object: {
        const QJsonObject left = a.toObject();
        const QJsonObject right = b.toObject();
        if (left.size() != right.size()) {
            return false;
        }
        for (auto it = left.constBegin(); it != left.constEnd(); ++it) {
            const auto other = right.constFind(it.key());
            if (other == right.constEnd() || !jsonEquals(it.value(), other.value())) {
                return false;
            }
        }
        return true;
    }
    default:
        return a == b;
    }
}

// ---------------------------------------------------------------------------------------------
// Verification steps

struct Signer
{
    JwsAlgorithm algorithm = JwsAlgorithm::HS256;
    QByteArray secret; // HS*
    const PublicKey *key = nullptr; // RS*, ES*, Ed*; points into the KeySet
};

// Signer selection of spec §1.5 (the reference server's generate_signer).
std::variant<Signer, JwtError> selectSigner(const QJsonObject &header, const KeySet::Data &keys)
{
    const QJsonValue algValue = header.value("alg"_L1);
    const std::optional<JwsAlgorithm> algorithm =
            algValue.isString() ? parseJwsAlgorithm(algValue.toString()) : std::nullopt;
    if (!algorithm) {
        return makeError(JwtErrorCode::NoSigner); // also "none": never accept unsigned tokens
    }
    // A kid that is not a string is treated as absent, as the reference server's guards do.
    const QJsonValue kidValue = header.value("kid"_L1);
    const bool hasKid = kidValue.isString();
    const QString kid = kidValue.toString();
    const KeyFamily family = keyFamily(*algorithm);

    auto kidError = [&kid] {
        JwtError error = makeError(JwtErrorCode::NoSignerForKid);
        error.kid = kid;
        return error;
    };

    if (family == KeyFamily::Oct) {
        if (hasKid && keys.hasJwks) {
            for (const KeySet::Data::OctKey &oct : keys.octKeys) {
                if (oct.kid == kid) {
                    if (!oct.secret) {
                        return kidError();
                    }
                    return Signer{ *algorithm, *oct.secret, nullptr };
                }
            }
        }
        // Supabase Auth signs HS256 tokens with a kid but never publishes the secret as a JWK:
        // those fall back to the tenant's jwt_secret. An empty secret would accept tokens anyone
        // can forge, so it counts as "no signer".
        if (keys.jwtSecret.isEmpty()) {
            return makeError(JwtErrorCode::NoSigner);
        }
        return Signer{ *algorithm, keys.jwtSecret, nullptr };
    }

    if (!hasKid || !keys.hasJwks) {
        return makeError(JwtErrorCode::NoSigner);
    }
    for (const KeySet::Data::AsymmetricKey &candidate : keys.asymmetricKeys) {
        if (candidate.kid == kid && candidate.key.family() == family) {
            return Signer{ *algorithm, {}, &candidate.key };
        }
    }
    return kidError();
}

bool checkSignature(const Signer &signer, QByteArrayView signingInput, QByteArrayView signature)
{
    if (signer.key) {
        return signer.key->verify(signer.algorithm, signingInput, signature);
    }
    return hmacVerify(signer.algorithm, signer.secret, signingInput, signature);
}

// Joken's claim validation: every claim present in the token that has a validator is checked,
// in key order (Elixir iterates small maps sorted, and QJsonObject is sorted too); the first
// failure wins. Absent claims are not validated.
std::optional<JwtError> validateClaims(const QJsonObject &claims, const VerifyOptions &options)
{
    for (auto it = claims.constBegin(); it != claims.constEnd(); ++it) {
        const QString key = it.key();
        if (key == "exp"_L1) {
            const std::optional<JsonNumber> exp = readNumber(it.value());
            if (!exp) {
                return makeError(JwtErrorCode::ClaimValidationFailed);
            }
            if (exp->isInteger) {
                if (exp->integer <= options.nowSeconds) {
                    JwtError error = makeError(JwtErrorCode::Expired);
                    qint64 ago = 0;
                    if (qSubOverflow(options.nowSeconds, exp->integer, &ago)) {
                        ago = std::numeric_limits<qint64>::max();
                    }
                    error.expiredSecondsAgo = ago;
                    return error;
                }
            } else if (!(exp->real > static_cast<double>(options.nowSeconds))) {
                // The reference server only phrases "expired N seconds ago" for integer exp;
                // an expired fractional exp falls through to its generic error.
                return makeError(JwtErrorCode::ClaimValidationFailed);
            }
        } else if (key == "iat"_L1) {
            if (!it.value().isDouble()) {
                return makeError(JwtErrorCode::ClaimValidationFailed);
            }
        } else {
            // Validators configured for exp/iat are shadowed by the built-in ones above, as in
            // the reference server's token_config.
            const auto expected = options.claimValidators.constFind(key);
            if (expected != options.claimValidators.constEnd()
                && !jsonEquals(it.value(), expected.value())) {
                return makeError(JwtErrorCode::ClaimValidationFailed);
            }
        }
    }
    return std::nullopt;
}

// The parts of a compact JWS, "header.payload.signature"; the signature covers
// "header.payload".
struct TokenParts
{
    QByteArrayView header;
    QByteArrayView payload;
    QByteArrayView signature;
    QByteArrayView signingInput;
};

std::optional<TokenParts> splitToken(QByteArrayView token)
{
    const qsizetype firstDot = token.indexOf('.');
    const qsizetype secondDot = firstDot < 0 ? -1 : token.indexOf('.', firstDot + 1);
    if (secondDot < 0 || token.indexOf('.', secondDot + 1) >= 0) {
        return std::nullopt;
    }
    return TokenParts{ token.first(firstDot), token.sliced(firstDot + 1, secondDot - firstDot - 1),
                       token.sliced(secondDot + 1), token.first(secondDot) };
}

// A payload that is not base64url JSON is malformed; JSON that is not an object is the generic
// error.
Result<QJsonObject, JwtError> decodeClaims(QByteArrayView payloadPart)
{
    const std::optional<QByteArray> payload = decodeBase64Url(payloadPart);
    if (!payload) {
        return makeError(JwtErrorCode::Malformed);
    }
    const std::optional<QJsonValue> claimsValue = parseJsonValue(*payload);
    if (!claimsValue) {
        return makeError(JwtErrorCode::Malformed);
    }
    if (!claimsValue->isObject()) {
        return makeError(JwtErrorCode::ClaimValidationFailed);
    }
    return claimsValue->toObject();
}

std::optional<QJsonObject> decodeHeader(QByteArrayView headerPart)
{
    const std::optional<QByteArray> headerBytes = decodeBase64Url(headerPart);
    const std::optional<QJsonValue> headerValue =
            headerBytes ? parseJsonValue(*headerBytes) : std::nullopt;
    if (!headerValue || !headerValue->isObject()) {
        return std::nullopt;
    }
    return headerValue->toObject();
}

// Selects the signer the header asks for and checks the token's signature with it.
std::optional<JwtError> verifySignature(const QJsonObject &header, const KeySet::Data &keys,
                                        const TokenParts &parts)
{
    std::variant<Signer, JwtError> signer = selectSigner(header, keys);
    if (JwtError *error = std::get_if<JwtError>(&signer)) {
        return std::move(*error);
    }
    const std::optional<QByteArray> signature = decodeBase64Url(parts.signature);
    if (!signature || !checkSignature(std::get<Signer>(signer), parts.signingInput, *signature)) {
        return makeError(JwtErrorCode::SignatureInvalid);
    }
    return std::nullopt;
}

// The reference server hands on exp/iat rounded to integers (JWT allows decimals). Returns the
// rounded exp, if there is one.
std::optional<qint64> roundTimeClaims(QJsonObject &claims)
{
    std::optional<qint64> exp;
    for (const QLatin1StringView key : { "exp"_L1, "iat"_L1 }) {
        if (const std::optional<JsonNumber> number = readNumber(claims.value(key))) {
            const qint64 rounded = roundToSeconds(*number);
            claims.insert(key, QJsonValue(rounded));
            if (key == "exp"_L1) {
                exp = rounded;
            }
        }
    }
    return exp;
}

bool isRegexWhitespace(char c)
{
    // PCRE's \s without the unicode flag: space, \t, \n, \v, \f, \r.
    return c == ' ' || (c >= '\t' && c <= '\r');
}

QString jwsAlgorithmName(HmacAlgorithm algorithm)
{
    switch (algorithm) {
    case HmacAlgorithm::HS256:
        return u"HS256"_s;
    case HmacAlgorithm::HS384:
        return u"HS384"_s;
    case HmacAlgorithm::HS512:
        break;
    }
    return u"HS512"_s;
}

JwsAlgorithm toJwsAlgorithm(HmacAlgorithm algorithm)
{
    switch (algorithm) {
    case HmacAlgorithm::HS256:
        return JwsAlgorithm::HS256;
    case HmacAlgorithm::HS384:
        return JwsAlgorithm::HS384;
    case HmacAlgorithm::HS512:
        break;
    }
    return JwsAlgorithm::HS512;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// JwtError

int JwtError::httpStatus() const
{
    // The reference server answers 500 for error shapes it has no message for.
    return code == JwtErrorCode::ClaimValidationFailed ? 500 : 401;
}

namespace {

// What the reference server says about each error, in one place: the socket's answer, the
// join reason's code (the reason is "<code>: <detail>"; none: its catch-all reason) and the
// detail, which is also the channel shutdown text.
struct JwtErrorTexts
{
    QString connect;
    QString joinCode;
    QString detail;
};

JwtErrorTexts textsOf(const JwtError &error)
{
    switch (error.code) {
    case JwtErrorCode::Malformed:
        return { InvalidJwtText, u"MalformedJWT"_s, InvalidJwtText };
    case JwtErrorCode::Expired:
        // The socket answer carries no seconds.
        return { u"Token has expired"_s, u"InvalidJWTToken"_s,
                 expiredText(error.expiredSecondsAgo) };
    case JwtErrorCode::InvalidExpiration:
        // A fractional exp less than half a second away cannot reach the reference server's
        // connect path; the token is expired for all practical purposes, so it gets that answer.
        return { u"Token has expired"_s, u"InvalidJWTToken"_s, InvalidExpirationText };
    case JwtErrorCode::MissingClaims:
        return { MissingClaimsText, u"InvalidJWTToken"_s, MissingClaimsText };
    case JwtErrorCode::SignatureInvalid:
        return { SignatureText, u"JwtSignatureError"_s, SignatureText };
    case JwtErrorCode::NoSigner:
        return { NoSignerText, u"JwtSignerError"_s, NoSignerText };
    case JwtErrorCode::NoSignerForKid:
        return { noSignerForKidText(error.kid), u"JwtSignerError"_s,
                 noSignerForKidText(error.kid) };
    case JwtErrorCode::ClaimValidationFailed:
        break;
    }
    // The reference server pushes Elixir's inspect of Joken's error term on shutdown; Joken's
    // own message for a failed validator is the readable part of it.
    return { u"Error connecting to Realtime"_s, QString(), u"Invalid token"_s };
}

} // namespace

QString JwtError::connectMessage() const
{
    return textsOf(*this).connect;
}

QString JwtError::joinReason() const
{
    const JwtErrorTexts texts = textsOf(*this);
    // The reference server's catch-all join reason has no code prefix.
    return texts.joinCode.isEmpty() ? u"Unknown Error on Channel"_s
                                    : texts.joinCode % u": "_s % texts.detail;
}

QString JwtError::shutdownMessage() const
{
    return textsOf(*this).detail;
}

// ---------------------------------------------------------------------------------------------
// KeySet

KeySet::KeySet() : m_data(std::make_unique<Data>()) { }

KeySet::~KeySet() = default;

Result<std::shared_ptr<const KeySet>> KeySet::build(const QByteArray &jwtSecret,
                                                    const QByteArray &jwksJson)
{
    // Not make_shared: the constructor is private.
    std::shared_ptr<KeySet> keySet(new KeySet());
    Data &data = *keySet->m_data;
    data.jwtSecret = jwtSecret;

    const QByteArray trimmed = jwksJson.trimmed();
    if (trimmed.isEmpty() || trimmed == "null") {
        return std::shared_ptr<const KeySet>(std::move(keySet));
    }
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(trimmed, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        return Error{ u"jwt_jwks is not valid JSON: "_s % parseError.errorString() };
    }
    const QJsonValue keys = document.object().value("keys"_L1);
    if (!document.isObject() || !keys.isArray()) {
        return Error{ u"jwt_jwks must be a JSON object with a \"keys\" array"_s };
    }
    data.hasJwks = true;

    const QJsonArray keyArray = keys.toArray();
    for (const auto &entry : keyArray) {
        const QJsonObject jwk = entry.toObject();
        const QJsonValue kid = jwk.value("kid"_L1);
        const QString kty = jwk.value("kty"_L1).toString();
        // Keys without a string kid can never be selected (selection is by kid), so skip them.
        if (!kid.isString()) {
            continue;
        }
        if (kty == "oct"_L1) {
            const QJsonValue k = jwk.value("k"_L1);
            if (!k.isString()) {
                continue;
            }
            std::optional<QByteArray> secret = decodeBase64Url(k.toString().toLatin1());
            if (secret && secret->isEmpty()) {
                secret.reset();
            }
            data.octKeys.push_back({ kid.toString(), std::move(secret) });
        } else if (std::optional<PublicKey> key = PublicKey::fromJwk(jwk)) {
            data.asymmetricKeys.push_back({ kid.toString(), std::move(*key) });
        }
    }
    return std::shared_ptr<const KeySet>(std::move(keySet));
}

// ---------------------------------------------------------------------------------------------
// Tokens

QByteArray cleanToken(QByteArrayView raw)
{
    // URL-decode first, then drop whitespace; decoding and filtering in one pass gives the same
    // result because filtering only ever looks at decoded bytes. A '%' not followed by two hex
    // digits is kept as is (the reference server's URI.decode raises; the token then fails as
    // malformed here instead).
    QByteArray out;
    out.reserve(raw.size());
    for (qsizetype i = 0; i < raw.size(); ++i) {
        char c = raw.at(i);
        if (c == '%' && i + 2 < raw.size() && hexDigitValue(raw.at(i + 1)) >= 0
            && hexDigitValue(raw.at(i + 2)) >= 0) {
            c = static_cast<char>(hexDigitValue(raw.at(i + 1)) * 16 + hexDigitValue(raw.at(i + 2)));
            i += 2;
        }
        if (!isRegexWhitespace(c)) {
            out.append(c);
        }
    }
    return out;
}

Result<VerifiedToken, JwtError> verifyToken(QByteArrayView token, const KeySet &keys,
                                            const VerifyOptions &options)
{
    // New-style Supabase API keys (sb_publishable_..., sb_secret_...) are not JWTs.
    if (token.isEmpty() || token.startsWith("sb_")) {
        return makeError(JwtErrorCode::Malformed);
    }
    const std::optional<TokenParts> parts = splitToken(token);
    if (!parts) {
        return makeError(JwtErrorCode::Malformed);
    }

    // Claims are looked at before the header, so a bad payload is "malformed" while a bad header
    // is the generic error (the reference server's check order and error shapes).
    Result<QJsonObject, JwtError> claims = decodeClaims(parts->payload);
    if (!claims) {
        return std::move(claims).error();
    }
    const std::optional<QJsonObject> header = decodeHeader(parts->header);
    if (!header) {
        return makeError(JwtErrorCode::ClaimValidationFailed);
    }
    if (std::optional<JwtError> error = verifySignature(*header, keys.data(), *parts)) {
        return std::move(*error);
    }
    if (std::optional<JwtError> error = validateClaims(*claims, options)) {
        return std::move(*error);
    }

    VerifiedToken verified;
    verified.exp = roundTimeClaims(*claims);
    if (options.requireRoleAndExp
        && (!claims->contains("role"_L1) || !claims->contains("exp"_L1))) {
        return makeError(JwtErrorCode::MissingClaims);
    }
    // A fractional exp just after now passes validation but rounds to now or earlier; the
    // reference server rejects it at join time. Rejecting it everywhere keeps the promise that a
    // returned exp is in the future (token re-check timers rely on it).
    if (verified.exp && *verified.exp <= options.nowSeconds) {
        return makeError(JwtErrorCode::InvalidExpiration);
    }
    verified.role = claims->value("role"_L1).toString();
    verified.claims = std::move(*claims);
    return verified;
}

QByteArray signHmac(const QJsonObject &claims, QByteArrayView secret, HmacAlgorithm algorithm,
                    const QString &kid)
{
    QJsonObject header{ { u"alg"_s, jwsAlgorithmName(algorithm) }, { u"typ"_s, u"JWT"_s } };
    if (!kid.isEmpty()) {
        header.insert(u"kid"_s, kid);
    }
    const QByteArray signingInput =
            encodeBase64Url(QJsonDocument(header).toJson(QJsonDocument::Compact)) + '.'
            + encodeBase64Url(QJsonDocument(claims).toJson(QJsonDocument::Compact));
    const QByteArray mac = hmacSign(toJwsAlgorithm(algorithm), secret, signingInput);
    return signingInput + '.' + encodeBase64Url(mac);
}

} // namespace rt::auth
