#pragma once

#include <QByteArrayView>
#include <QString>
#include <QStringView>

#include <memory>
#include <optional>

namespace re2 {
class RE2;
}

namespace rt::subscriptions {

// A `match`/`imatch` filter pattern, checked when a client subscribes and compiled once for
// every subscription that uses it. Patterns come from clients and run on the change stream that
// all of a tenant's subscribers share, so the engine is RE2: matching is linear in the value's
// length whatever the pattern (no backtracking), compiled programs are bounded in size and
// memory, and the pattern's length is capped. RE2's syntax is not PostgreSQL's POSIX ARE: the
// constructs where the two differ (back-references, look-around, ARE word boundaries and
// escapes, collating elements, directors, embedded options other than a leading (?i), named
// groups) are refused with a join error that says so, never matched differently. Immutable and
// thread-safe once created.
class RegexPattern
{
public:
    // Patterns longer than this (in UTF-8 bytes) are refused.
    static constexpr qsizetype MaxPatternBytes = 1000;

    ~RegexPattern();
    RegexPattern(const RegexPattern &) = delete;
    RegexPattern &operator=(const RegexPattern &) = delete;

    // Why `pattern` cannot be a filter, as the join's error text; nullopt when it can.
    static std::optional<QString> refusal(QStringView pattern, bool caseInsensitive);

    // The compiled pattern, shared by every subscription with the same text and case rule;
    // nullptr when refusal() is not nullopt.
    static std::shared_ptr<const RegexPattern> compile(QStringView pattern, bool caseInsensitive);

    // PostgreSQL's `~` / `~*`: whether the pattern matches anywhere in `utf8Text`.
    bool matches(QByteArrayView utf8Text) const;

private:
    explicit RegexPattern(std::unique_ptr<re2::RE2> compiled);
    std::unique_ptr<re2::RE2> m_compiled;
};

} // namespace rt::subscriptions
