// Tests of the postgres_changes filter parser (spec/server-protocol.md §6.2): splitting, quoting,
// `not.`, every operator, the `in` array literal, and every error text, including the
// database-side texts parseFilter reports as FilterError::Kind::Database.
#include "server/subscriptions/filter.h"

#include <QTest>

using rt::subscriptions::Filter;
using rt::subscriptions::FilterError;
using rt::subscriptions::Op;

namespace {

// "col|op|value|negate" per filter, joined by ";" (compact expectations for data rows).
QString describe(const QList<Filter> &filters)
{
    QStringList parts;
    for (const Filter &filter : filters) {
        parts.append(filter.column + u'|' + rt::subscriptions::opName(filter.op) + u'|'
                     + filter.value + u'|'
                     + (filter.negate ? QStringLiteral("true") : QStringLiteral("false")));
    }
    return parts.join(u';');
}

const QString Prefix = QStringLiteral("Error parsing `filter` params: ");

} // namespace

class SubscriptionFilterTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void opNames();
    void parses_data();
    void parses();
    void rejects_data();
    void rejects();
    void longPartsAreTruncatedLikeInspect();
    void databaseSideErrors_data();
    void databaseSideErrors();
    void syntaxErrorWinsOverDatabaseError();
    void raiseExceptionText();
};

void SubscriptionFilterTest::opNames()
{
    const QStringList expected = { QStringLiteral("eq"),        QStringLiteral("neq"),
                                   QStringLiteral("lt"),        QStringLiteral("lte"),
                                   QStringLiteral("gt"),        QStringLiteral("gte"),
                                   QStringLiteral("in"),        QStringLiteral("like"),
                                   QStringLiteral("ilike"),     QStringLiteral("is"),
                                   QStringLiteral("match"),     QStringLiteral("imatch"),
                                   QStringLiteral("isdistinct") };
    for (int i = 0; i < expected.size(); ++i) {
        const Op op = static_cast<Op>(i);
        QCOMPARE(QString(rt::subscriptions::opName(op)), expected.at(i));
        QCOMPARE(rt::subscriptions::opFromName(expected.at(i)), std::optional<Op>(op));
    }
    QCOMPARE(rt::subscriptions::opFromName(u"EQ"), std::nullopt);
    QCOMPARE(rt::subscriptions::opFromName(u"not"), std::nullopt);
    QCOMPARE(rt::subscriptions::opFromName(u""), std::nullopt);
}

void SubscriptionFilterTest::parses_data()
{
    QTest::addColumn<QString>("filter");
    QTest::addColumn<QString>("expected");

    // Every operator.
    QTest::newRow("eq") << "subject=eq.hey"
                        << "subject|eq|hey|false";
    QTest::newRow("neq") << "id=neq.1"
                         << "id|neq|1|false";
    QTest::newRow("lt") << "id=lt.1"
                        << "id|lt|1|false";
    QTest::newRow("lte") << "id=lte.1"
                         << "id|lte|1|false";
    QTest::newRow("gt") << "id=gt.1"
                        << "id|gt|1|false";
    QTest::newRow("gte") << "id=gte.1"
                         << "id|gte|1|false";
    QTest::newRow("in") << "subject=in.(hidee,ho)"
                        << "subject|in|{hidee,ho}|false";
    QTest::newRow("like") << "details=like.hel%"
                          << "details|like|hel%|false";
    QTest::newRow("ilike") << "details=ilike.HEL%"
                           << "details|ilike|HEL%|false";
    QTest::newRow("is") << "deleted_at=is.null"
                        << "deleted_at|is|null|false";
    QTest::newRow("match") << "name=match.^a.*z$"
                           << "name|match|^a.*z$|false";
    QTest::newRow("imatch") << "name=imatch.^A"
                            << "name|imatch|^A|false";
    QTest::newRow("isdistinct") << "x=isdistinct.5"
                                << "x|isdistinct|5|false";

    // Negation.
    QTest::newRow("not.like") << "subject=not.like.hey%"
                              << "subject|like|hey%|true";
    QTest::newRow("not.in") << "id=not.in.(1,2)"
                            << "id|in|{1,2}|true";
    QTest::newRow("not.is") << "x=not.is.null"
                            << "x|is|null|true";
    QTest::newRow("not.isdistinct") << "x=not.isdistinct.1"
                                    << "x|isdistinct|1|true";
    QTest::newRow("not with quotes") << "name=not.neq.\"a,b\""
                                     << "name|neq|a,b|true";
    QTest::newRow("not with apostrophe") << "name=not.neq.a'b"
                                         << "name|neq|a'b|true";

    // AND composition.
    QTest::newRow("two ranges") << "id=gt.0,id=lt.100"
                                << "id|gt|0|false;id|lt|100|false";
    QTest::newRow("in then eq") << "id=in.(1,2,3),details=eq.active"
                                << "id|in|{1,2,3}|false;details|eq|active|false";
    QTest::newRow("eq then in") << "quantity=gt.0,name=in.(red,blue)"
                                << "quantity|gt|0|false;name|in|{red,blue}|false";
    QTest::newRow("two ins") << "name=in.(red,blue,green),status=in.(active,inactive)"
                             << "name|in|{red,blue,green}|false;status|in|{active,inactive}|false";
    QTest::newRow("segments are trimmed") << " a=eq.1 ,  b=eq.2 "
                                          << "a|eq|1|false;b|eq|2|false";
    QTest::newRow("unicode white space trimmed")
            << QStringLiteral("\u00a0a=eq.1\u3000,\u2003b=eq.2") << "a|eq|1|false;b|eq|2|false";

    // Empty.
    QTest::newRow("empty") << ""
                           << "";
    QTest::newRow("white space") << "   "
                                 << "";
    QTest::newRow("tabs and newlines") << "\t\n "
                                       << "";

    // Parentheses and quotes.
    QTest::newRow("closing parenthesis in values") << "a=eq.x),b=eq.y),c=eq.z"
                                                   << "a|eq|x)|false;b|eq|y)|false;c|eq|z|false";
    QTest::newRow("comma inside parentheses") << "x=eq.(a,b)"
                                              << "x|eq|(a,b)|false";
    QTest::newRow("unbalanced parenthesis keeps the rest") << "x=eq.a(b,c=eq.d"
                                                           << "x|eq|a(b,c=eq.d|false";
    QTest::newRow("quotes kept verbatim mid-value") << "name=eq.O'Brien \"x\""
                                                    << "name|eq|O'Brien \"x\"|false";
    QTest::newRow("in with apostrophe") << "name=in.(O'Brien,Smith)"
                                        << "name|in|{O'Brien,Smith}|false";
    QTest::newRow("quoted comma") << "name=eq.\"a,b\""
                                  << "name|eq|a,b|false";
    QTest::newRow("quoted comma then more") << "name=eq.\"a,b\",id=gt.0"
                                            << "name|eq|a,b|false;id|gt|0|false";
    QTest::newRow("quoted specials") << "name=eq.\"a.b:c(d)\""
                                     << "name|eq|a.b:c(d)|false";
    QTest::newRow("escaped quote") << "name=eq.\"she said \\\"hi\\\"\""
                                   << "name|eq|she said \"hi\"|false";
    QTest::newRow("escaped backslash") << "path=eq.\"C:\\\\tmp\""
                                       << "path|eq|C:\\tmp|false";
    QTest::newRow("backslash keeps the next character") << "path=eq.\"C:\\new\""
                                                        << "path|eq|C:new|false";
    QTest::newRow("empty quoted") << "name=eq.\"\""
                                  << "name|eq||false";
    QTest::newRow("quoted spaces kept") << "name=eq.\" a \""
                                        << "name|eq| a |false";
    QTest::newRow("in with a quoted comma") << "tags=in.(\"a,b\",c)"
                                            << "tags|in|{\"a,b\",c}|false";
    QTest::newRow("in with two quoted commas") << "tags=in.(\"a,b\",\"c,d\")"
                                               << "tags|in|{\"a,b\",\"c,d\"}|false";
    QTest::newRow("in with a, b, \"c,d\"") << "x=in.(a,b,\"c,d\")"
                                           << "x|in|{a,b,\"c,d\"}|false";
    QTest::newRow("unterminated quote kept") << "name=eq.\"unterminated"
                                             << "name|eq|\"unterminated|false";
    QTest::newRow("junk after closing quote kept") << "name=eq.\"ab\"cd"
                                                   << "name|eq|\"ab\"cd|false";
    QTest::newRow("quote after a letter does not open") << "desc=eq.5\" tall,id=gt.0"
                                                        << "desc|eq|5\" tall|false;id|gt|0|false";
    QTest::newRow("escaped quote at the end is unterminated") << "name=eq.\"abc\\\""
                                                              << "name|eq|\"abc\\\"|false";
    QTest::newRow("trailing backslash in quotes") << "name=eq.\"abc\\"
                                                  << "name|eq|\"abc\\|false";
    QTest::newRow("quote opened after a comma inside parentheses")
            << "x=in.(a,\"b)\",c),y=eq.1"
            << "x|in|{a,\"b)\",c}|false;y|eq|1|false";

    // Splitting on the first '=' and the first '.'.
    QTest::newRow("value with =") << "a=eq.b=c"
                                  << "a|eq|b=c|false";
    QTest::newRow("value with dots") << "a=eq.1.5"
                                     << "a|eq|1.5|false";
    QTest::newRow("empty column") << "=eq.1"
                                  << "|eq|1|false";
    QTest::newRow("empty value") << "a=eq."
                                 << "a|eq||false";
    QTest::newRow("space in column kept") << "a b=eq.1"
                                          << "a b|eq|1|false";
    QTest::newRow("empty in") << "x=in.()"
                              << "x|in|{}|false";
}

void SubscriptionFilterTest::parses()
{
    QFETCH(QString, filter);
    QFETCH(QString, expected);
    const auto result = rt::subscriptions::parseFilterSyntax(filter);
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error()));
    QCOMPARE(describe(*result), expected);

    const auto full = rt::subscriptions::parseFilter(filter);
    QVERIFY(full.ok());
    QCOMPARE(describe(*full), expected);
}

void SubscriptionFilterTest::rejects_data()
{
    QTest::addColumn<QString>("filter");
    QTest::addColumn<QString>("error");

    QTest::newRow("unsupported operator") << "subject=foo.hey"
                                          << "[\"foo\", \"hey\"]";
    QTest::newRow("undefined") << "undefined"
                               << "[\"undefined\"]";
    QTest::newRow("no dot") << "id=eq"
                            << "[\"eq\"]";
    QTest::newRow("nothing after =") << "id="
                                     << "[\"\"]";
    QTest::newRow("not. without operator") << "id=not.eq"
                                           << "[\"eq\"]";
    QTest::newRow("not. with unknown operator") << "id=not.foo.1"
                                                << "[\"foo\", \"1\"]";
    QTest::newRow("upper-case NOT") << "id=NOT.eq.1"
                                    << "[\"NOT\", \"eq.1\"]";
    // `not.` is removed once; "not" is then the operator, which does not exist.
    QTest::newRow("not.not") << "x=not.not.eq.1"
                             << "[\"not\", \"eq.1\"]";
    QTest::newRow("upper-case operator") << "id=EQ.1"
                                         << "[\"EQ\", \"1\"]";
    QTest::newRow("second = without dot") << "a=b=c"
                                          << "[\"b=c\"]";
    QTest::newRow("later segment bad") << "id=eq.1,foo"
                                       << "[\"foo\"]";
    QTest::newRow("first error wins") << "id=foo.1,id=bar.2"
                                      << "[\"foo\", \"1\"]";
    QTest::newRow("unsupported in a multi-filter") << "id=gt.0,id=foo.100"
                                                   << "[\"foo\", \"100\"]";
    QTest::newRow("quote in the error") << "a=eq.a\"b,c\""
                                        << "[\"c\\\"\"]";
    QTest::newRow("quote at a segment start does not open") << "\"a,b\"=eq.1"
                                                            << "[\"\\\"a\"]";
    QTest::newRow("operator with a quote") << "a=fo\"o.1"
                                           << "[\"fo\\\"o\", \"1\"]";
    QTest::newRow("interpolation is escaped") << "a=#{x}.1"
                                              << "[\"\\#{x}\", \"1\"]";
    QTest::newRow("backslash is escaped") << "a=b\\c.1"
                                          << "[\"b\\\\c\", \"1\"]";
    QTest::newRow("newline is escaped") << "a=b\nc.1"
                                        << "[\"b\\nc\", \"1\"]";
    QTest::newRow("control character makes a bitstring")
            << QStringLiteral("a=f\u0001o.1") << "[<<102, 1, 111>>, \"1\"]";
    QTest::newRow("non-breaking space is shown as \\u")
            << QStringLiteral("a=f\u00a0o.1") << "[\"f\\u00A0o\", \"1\"]";
    QTest::newRow("unicode kept") << QStringLiteral("a=caf\u00e9.1")
                                  << QStringLiteral("[\"caf\u00e9\", \"1\"]");

    QTest::newRow("in without parentheses") << "id=in.1,2"
                                            << "`in` filter value must be wrapped by parentheses";
    QTest::newRow("in without closing parenthesis")
            << "id=in.(1,2"
            << "`in` filter value must be wrapped by parentheses";
    QTest::newRow("in with one parenthesis") << "id=in.("
                                             << "`in` filter value must be wrapped by parentheses";
    QTest::newRow("in with a quoted list") << "id=in.\"(1,2)\""
                                           << "`in` filter value must be wrapped by parentheses";

    QTest::newRow("trailing comma")
            << "id=gt.0,"
            << "filter must not contain empty segments (check for extra commas)";
    QTest::newRow("leading comma")
            << ",id=gt.0"
            << "filter must not contain empty segments (check for extra commas)";
    QTest::newRow("double comma")
            << "a=eq.1,,b=eq.2"
            << "filter must not contain empty segments (check for extra commas)";
    QTest::newRow("blank segment")
            << "a=eq.1, ,b=eq.2"
            << "filter must not contain empty segments (check for extra commas)";
}

void SubscriptionFilterTest::rejects()
{
    QFETCH(QString, filter);
    QFETCH(QString, error);
    const auto result = rt::subscriptions::parseFilterSyntax(filter);
    QVERIFY(!result.ok());
    QCOMPARE(result.error(), Prefix + error);

    const auto full = rt::subscriptions::parseFilter(filter);
    QVERIFY(!full.ok());
    QCOMPARE(full.error().kind, FilterError::Kind::Syntax);
    QCOMPARE(full.error().message, Prefix + error);
}

void SubscriptionFilterTest::longPartsAreTruncatedLikeInspect()
{
    // inspect/1 prints at most 4096 characters of a string, then ` <> ...`.
    const QString op(5000, u'a');
    const auto result = rt::subscriptions::parseFilterSyntax(
            QString(QStringLiteral("x=") + op + QStringLiteral(".1")));
    QVERIFY(!result.ok());
    QCOMPARE(result.error(),
             Prefix + QStringLiteral("[\"") + QString(4096, u'a')
                     + QStringLiteral("\" <> ..., \"1\"]"));
}

void SubscriptionFilterTest::databaseSideErrors_data()
{
    QTest::addColumn<QString>("filter");
    QTest::addColumn<QString>("error"); // empty: accepted

    const QString tooMany = QStringLiteral("too many values for `in` filter. Maximum 100");
    const QString badIs =
            QStringLiteral("invalid value for is filter: must be null, true, false, or unknown");

    QStringList hundred;
    for (int i = 0; i < 100; ++i) {
        hundred.append(QString::number(i));
    }
    QTest::newRow("100 values") << QStringLiteral("id=in.(%1)").arg(hundred.join(u','))
                                << QString();
    QTest::newRow("101 values") << QStringLiteral("id=in.(%1,100)").arg(hundred.join(u','))
                                << tooMany;
    QTest::newRow("101 values, negated")
            << QStringLiteral("id=not.in.(%1,100)").arg(hundred.join(u',')) << tooMany;
    QStringList quoted;
    for (int i = 0; i < 100; ++i) {
        quoted.append(QStringLiteral("\"a,%1\"").arg(i));
    }
    QTest::newRow("quoted commas count once")
            << QStringLiteral("t=in.(%1)").arg(quoted.join(u',')) << QString();
    QTest::newRow("101 after another filter")
            << QStringLiteral("a=eq.1,id=in.(%1,100)").arg(hundred.join(u',')) << tooMany;
    // A literal the database cannot read fails with a type-specific cast error there.
    QTest::newRow("malformed literal is left to the database")
            << QStringLiteral("id=in.(%1,100,\"x)").arg(hundred.join(u',')) << QString();

    QTest::newRow("is null") << "x=is.null" << QString();
    QTest::newRow("is true") << "x=is.true" << QString();
    QTest::newRow("is false") << "x=is.false" << QString();
    QTest::newRow("is unknown") << "x=is.unknown" << QString();
    QTest::newRow("is quoted null") << "x=is.\"null\"" << QString();
    QTest::newRow("not.is.true") << "x=not.is.true" << QString();
    QTest::newRow("is maybe") << "x=is.maybe" << badIs;
    QTest::newRow("is NULL is case-sensitive") << "x=is.NULL" << badIs;
    QTest::newRow("is empty") << "x=is." << badIs;
    QTest::newRow("first failing filter wins")
            << QStringLiteral("x=is.maybe,id=in.(%1,100)").arg(hundred.join(u',')) << badIs;
}

void SubscriptionFilterTest::databaseSideErrors()
{
    QFETCH(QString, filter);
    QFETCH(QString, error);

    // The parser itself accepts all of these (upstream's Elixir side does too).
    const auto syntax = rt::subscriptions::parseFilterSyntax(filter);
    QVERIFY(syntax.ok());
    QCOMPARE(rt::subscriptions::firstDatabaseFilterError(*syntax).value_or(QString()), error);

    const auto full = rt::subscriptions::parseFilter(filter);
    if (error.isEmpty()) {
        QVERIFY(full.ok());
        QCOMPARE(*full, *syntax);
    } else {
        QVERIFY(!full.ok());
        QCOMPARE(full.error().kind, FilterError::Kind::Database);
        QCOMPARE(full.error().message, error);
    }
}

void SubscriptionFilterTest::syntaxErrorWinsOverDatabaseError()
{
    const auto result = rt::subscriptions::parseFilter(u"x=is.maybe,y=foo.1");
    QVERIFY(!result.ok());
    QCOMPARE(result.error().kind, FilterError::Kind::Syntax);
    QCOMPARE(result.error().message, Prefix + QStringLiteral("[\"foo\", \"1\"]"));
}

void SubscriptionFilterTest::raiseExceptionText()
{
    QCOMPARE(rt::subscriptions::raiseExceptionText(QStringLiteral("invalid column for filter x")),
             QStringLiteral("ERROR P0001 (raise_exception) invalid column for filter x"));
}

QTEST_APPLESS_MAIN(SubscriptionFilterTest)
#include "tst_subscription_filter.moc"
