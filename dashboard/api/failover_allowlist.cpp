#include "dashboard/api/failover_allowlist.h"

#include <QHostAddress>
#include <QRegularExpression>

#include <algorithm>

namespace rt::dashboard {

namespace {

// Letters, digits, '-' and '.', as in a DNS name (IDN hosts come out of QUrl in ACE form).
bool isHostName(const QString &text)
{
    static const QRegularExpression Name(QStringLiteral("^[a-z0-9]([a-z0-9-]*[a-z0-9])?"
                                                        "(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$"));
    return Name.match(text).hasMatch();
}

// A host as QUrl gives it, lowercased; IPv6 without brackets.
QString normalizedHost(const QString &host)
{
    QString text = host.toLower();
    if (text.startsWith(u'[') && text.endsWith(u']')) {
        text = text.mid(1, text.size() - 2);
    }
    return text;
}

} // namespace

Result<FailoverAllowlist> FailoverAllowlist::create(const QUrl &operatorBase,
                                                    const QStringList &patterns)
{
    FailoverAllowlist allowlist;
    allowlist.m_operatorBase = operatorBase;
    for (const QString &text : patterns) {
        Result<Pattern> pattern = parsePattern(text);
        if (!pattern) {
            return std::move(pattern).error();
        }
        allowlist.m_patterns.append(std::move(pattern).value());
    }
    return allowlist;
}

Result<FailoverAllowlist::Pattern> FailoverAllowlist::parsePattern(const QString &text)
{
    const QString trimmed = normalizedHost(text.trimmed());
    Pattern pattern;
    if (trimmed.contains(u'/')) {
        const auto [address, length] = QHostAddress::parseSubnet(trimmed);
        if (length >= 0 && !address.isNull()) {
            pattern.kind = Pattern::Kind::Subnet;
            pattern.subnet = trimmed;
            return pattern;
        }
    } else if (!QHostAddress(trimmed).isNull()) {
        pattern.text = QHostAddress(trimmed).toString();
        return pattern;
    } else if (trimmed.startsWith(QLatin1String("*.")) && isHostName(trimmed.mid(2))) {
        pattern.kind = Pattern::Kind::Suffix;
        pattern.text = trimmed.mid(1);
        return pattern;
    } else if (isHostName(trimmed)) {
        pattern.text = trimmed;
        return pattern;
    }
    return Error{ tr("\"%1\" is not a host name, *.domain, IP address or subnet (a failover host "
                     "has no scheme and no port).")
                          .arg(text.trimmed()) };
}

bool FailoverAllowlist::matches(const Pattern &pattern, const QString &host)
{
    const QHostAddress address(host);
    switch (pattern.kind) {
    case Pattern::Kind::Name:
        return address.isNull() ? host == pattern.text : address.toString() == pattern.text;
    case Pattern::Kind::Suffix:
        return address.isNull() && host.endsWith(pattern.text);
    case Pattern::Kind::Subnet:
        return !address.isNull() && address.isInSubnet(QHostAddress::parseSubnet(pattern.subnet));
    }
    return false;
}

bool FailoverAllowlist::admits(const QUrl &base) const
{
    if (base.isEmpty() || base.scheme() != m_operatorBase.scheme()) {
        return false;
    }
    const QString host = normalizedHost(base.host());
    if (m_patterns.isEmpty() || host == normalizedHost(m_operatorBase.host())) {
        return true;
    }
    return std::any_of(m_patterns.cbegin(), m_patterns.cend(),
                       [&host](const Pattern &pattern) { return matches(pattern, host); });
}

QList<QUrl> FailoverAllowlist::filter(const QList<QUrl> &candidates) const
{
    QList<QUrl> admitted;
    for (const QUrl &url : candidates) {
        if (admits(url)) {
            admitted.append(url);
        }
    }
    return admitted;
}

QStringList FailoverAllowlist::splitPatterns(const QString &text)
{
    static const QRegularExpression Separators(QStringLiteral("[,\\s]+"));
    return text.split(Separators, Qt::SkipEmptyParts);
}

} // namespace rt::dashboard
