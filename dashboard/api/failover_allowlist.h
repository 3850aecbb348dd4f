#pragma once

#include "shared/core/result.h"

#include <QCoreApplication>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

namespace rt::dashboard {

// What the operator tells the dashboard to trust: the CAs that vouch for https nodes and the
// hosts it may fail over to. Both go with every connection (command line, connect dialog,
// remembered in the settings).
struct NodeTrust
{
    QString caFile; // PEM file: the only CAs trusted for https nodes; empty: the system's
    QStringList failoverHosts; // host patterns (FailoverAllowlist); empty: the default list
    friend bool operator==(const NodeTrust &, const NodeTrust &) = default;
};

// Which nodes the dashboard may dial after the operator's own, that is, send its operator token
// to. Only nodes under the operator's scheme (a session begun over https never falls back to
// http, where the token would travel in clear), and among those:
//   - without patterns, the hosts it was started with and the members the cluster reports;
//   - with patterns, only the operator's host and hosts matching one of them: an exact name or
//     address ("node-a.internal", "198.18.0.11"), a wildcard for one or more labels
//     ("*.rt.internal"), or a subnet ("198.18.0.0/15", "fd00::/8").
// Pure: no I/O, no name resolution (a name pattern matches names, a subnet matches addresses).
class FailoverAllowlist
{
    Q_DECLARE_TR_FUNCTIONS(FailoverAllowlist)

public:
    // Admits nothing (no operator node yet).
    FailoverAllowlist() = default;
    // The operator's node (a base URL from nodeBaseUrl()) and the patterns. An invalid pattern
    // is an error naming it.
    static Result<FailoverAllowlist> create(const QUrl &operatorBase, const QStringList &patterns);

    // Whether `base` (a node base URL) may be dialled.
    bool admits(const QUrl &base) const;
    // `candidates` without those it does not admit, in their order.
    QList<QUrl> filter(const QList<QUrl> &candidates) const;
    bool restricted() const { return !m_patterns.isEmpty(); }

    // The patterns of a comma- or whitespace-separated list, trimmed, without empty items.
    static QStringList splitPatterns(const QString &text);

private:
    struct Pattern
    {
        enum class Kind { Name, Suffix, Subnet };
        Kind kind = Kind::Name;
        QString text; // Name: lowercased host; Suffix: ".domain" lowercased
        QString subnet; // Subnet: "address/length", for QHostAddress::parseSubnet()
    };

    static Result<Pattern> parsePattern(const QString &text);
    static bool matches(const Pattern &pattern, const QString &host);

    QUrl m_operatorBase;
    QList<Pattern> m_patterns;
};

} // namespace rt::dashboard
