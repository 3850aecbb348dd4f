#include "server/subscriptions/regex_pattern.h"

#include <QHash>

#include <re2/re2.h>

#include <mutex>
#include <string>
#include <utility>

namespace rt::subscriptions {

namespace {

// Bounds one compiled pattern's program and its lazily built DFA; a pattern that needs more
// fails to compile ("pattern too large") and is refused at join.
constexpr int64_t MaxProgramMemory = int64_t{ 256 } * 1024;

const QString NotSupported = QStringLiteral(
        "match filter pattern is not supported: %1 (match and imatch use RE2, a linear-time "
        "engine: back-references, look-around and the POSIX-only syntax are refused rather "
        "than matched differently)");

// Where ARE and RE2 would read the pattern differently, or RE2 would silently accept what ARE
// means otherwise; nullopt when the pattern means the same to both (or RE2 rejects it itself).
std::optional<QString> divergentEscape(QChar next)
{
    switch (next.unicode()) {
    case 'b': // ARE: backspace; RE2: word boundary
    case 'B': // ARE: a backslash; RE2: not a word boundary
        return QStringLiteral("\\%1 means something else in PostgreSQL").arg(next);
    case 'm':
    case 'M':
    case 'y':
    case 'Y':
    case 'Z':
        return QStringLiteral("the PostgreSQL escape \\%1").arg(next);
    default:
        return std::nullopt;
    }
}

// Inside a bracket expression at `at` (just after '['): [.x.], [=x=], [:<:] and [:>:].
std::optional<QString> divergentBracketItem(QStringView pattern, qsizetype at)
{
    if (at + 1 >= pattern.size() || pattern.at(at) != u'[') {
        return std::nullopt;
    }
    const QChar kind = pattern.at(at + 1);
    if (kind == u'.' || kind == u'=') {
        return QStringLiteral("collating elements and equivalence classes ([%1 %1])").arg(kind);
    }
    if (kind == u':' && at + 2 < pattern.size()
        && (pattern.at(at + 2) == u'<' || pattern.at(at + 2) == u'>')) {
        return QStringLiteral("the word boundaries [[:<:]] and [[:>:]]");
    }
    return std::nullopt;
}

// `(?` at `at`: non-capturing groups are common ground; a leading (?i) too.
std::optional<QString> divergentGroup(QStringView pattern, qsizetype at)
{
    const QStringView rest = pattern.sliced(at + 2);
    if (rest.startsWith(u':')) {
        return std::nullopt;
    }
    if (rest.startsWith(u'=') || rest.startsWith(u'!') || rest.startsWith(u'<')) {
        return QStringLiteral("look-around");
    }
    if (rest.startsWith(u'P')) {
        return QStringLiteral("named groups");
    }
    if (at == 0 && rest.startsWith(QLatin1String("i)"))) {
        return std::nullopt;
    }
    return QStringLiteral("embedded options other than a leading (?i)");
}

// One pass over the pattern, tracking bracket expressions (where ']' first is literal).
std::optional<QString> divergentSyntax(QStringView pattern)
{
    if (pattern.startsWith(QLatin1String("***"))) {
        return QStringLiteral("the ***= and ***: directors");
    }
    bool inBracket = false;
    qsizetype bracketStart = 0;
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        const QChar c = pattern.at(i);
        if (c == u'\\' && i + 1 < pattern.size()) {
            if (std::optional<QString> escape = divergentEscape(pattern.at(i + 1))) {
                return escape;
            }
            ++i;
            continue;
        }
        if (inBracket) {
            if (std::optional<QString> item = divergentBracketItem(pattern, i)) {
                return item;
            }
            if (c == u'[' && i + 1 < pattern.size() && pattern.at(i + 1) == u':') {
                // A class name such as [:alpha:]: its ']' does not close the bracket.
                const qsizetype end = pattern.indexOf(QLatin1String(":]"), i + 2);
                if (end > 0) {
                    i = end + 1;
                    continue;
                }
            }
            const bool literalFirst = i == bracketStart
                    || (i == bracketStart + 1 && pattern.at(bracketStart) == u'^');
            if (c == u']' && !literalFirst) {
                inBracket = false;
            }
            continue;
        }
        if (c == u'[') {
            inBracket = true;
            bracketStart = i + 1;
        } else if (c == u'(' && i + 1 < pattern.size() && pattern.at(i + 1) == u'?') {
            if (std::optional<QString> group = divergentGroup(pattern, i)) {
                return group;
            }
        }
    }
    return std::nullopt;
}

RE2::Options optionsFor(bool caseInsensitive)
{
    RE2::Options options;
    options.set_encoding(RE2::Options::EncodingUTF8);
    options.set_log_errors(false);
    options.set_dot_nl(true); // ARE: '.' matches a newline unless newline-sensitive
    options.set_case_sensitive(!caseInsensitive);
    options.set_max_mem(MaxProgramMemory);
    return options;
}

struct Compiled
{
    std::unique_ptr<re2::RE2> regex;
    QString refusal;
};

Compiled compileChecked(QStringView pattern, bool caseInsensitive)
{
    const QByteArray utf8 = pattern.toUtf8();
    if (utf8.size() > RegexPattern::MaxPatternBytes) {
        return { nullptr,
                 QStringLiteral("match filter pattern is too long: %1 bytes, at most %2")
                         .arg(utf8.size())
                         .arg(RegexPattern::MaxPatternBytes) };
    }
    if (std::optional<QString> divergent = divergentSyntax(pattern)) {
        return { nullptr, NotSupported.arg(*divergent) };
    }
    auto regex = std::make_unique<re2::RE2>(re2::StringPiece(utf8.constData(), utf8.size()),
                                            optionsFor(caseInsensitive));
    if (!regex->ok()) {
        return { nullptr, NotSupported.arg(QString::fromStdString(regex->error())) };
    }
    return { std::move(regex), QString() };
}

// Patterns in use, by case rule and text: subscriptions with the same pattern share one
// compiled program. Entries die with their last subscription; the map is pruned as it grows.
class PatternRegistry
{
public:
    std::shared_ptr<const RegexPattern> find(const QString &key)
    {
        const std::lock_guard lock(m_mutex);
        return m_patterns.value(key).lock();
    }

    void remember(const QString &key, const std::shared_ptr<const RegexPattern> &pattern)
    {
        const std::lock_guard lock(m_mutex);
        if (m_patterns.size() >= m_pruneAt) {
            m_patterns.removeIf([](const auto &entry) { return entry.value().expired(); });
            m_pruneAt = std::max<qsizetype>(1024, 2 * m_patterns.size());
        }
        m_patterns.insert(key, pattern);
    }

private:
    std::mutex m_mutex;
    QHash<QString, std::weak_ptr<const RegexPattern>> m_patterns;
    qsizetype m_pruneAt = 1024;
};

PatternRegistry &registry()
{
    static PatternRegistry instance;
    return instance;
}

} // namespace

RegexPattern::RegexPattern(std::unique_ptr<re2::RE2> compiled) : m_compiled(std::move(compiled)) { }

RegexPattern::~RegexPattern() = default;

std::optional<QString> RegexPattern::refusal(QStringView pattern, bool caseInsensitive)
{
    if (compile(pattern, caseInsensitive)) {
        return std::nullopt;
    }
    return compileChecked(pattern, caseInsensitive).refusal;
}

std::shared_ptr<const RegexPattern> RegexPattern::compile(QStringView pattern, bool caseInsensitive)
{
    const QString key = (caseInsensitive ? u'i' : u'c') + pattern.toString();
    if (std::shared_ptr<const RegexPattern> known = registry().find(key)) {
        return known;
    }
    Compiled compiled = compileChecked(pattern, caseInsensitive);
    if (!compiled.regex) {
        return nullptr;
    }
    std::shared_ptr<const RegexPattern> made(new RegexPattern(std::move(compiled.regex)));
    registry().remember(key, made);
    return made;
}

bool RegexPattern::matches(QByteArrayView utf8Text) const
{
    return re2::RE2::PartialMatch(re2::StringPiece(utf8Text.data(), utf8Text.size()), *m_compiled);
}

} // namespace rt::subscriptions
