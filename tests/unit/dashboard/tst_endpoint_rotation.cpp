// The failover policy: which node next, how long to wait, reset on success.
#include "dashboard/api/endpoint_rotation.h"

#include <QTest>

using namespace std::chrono_literals;
using rt::dashboard::EndpointRotation;

namespace {

QUrl node(char name)
{
    return QUrl(QStringLiteral("http://node-%1:4000").arg(QLatin1Char(name)));
}

} // namespace

class EndpointRotationTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void startsWithTheFirstEndpointAtOnce()
    {
        EndpointRotation rotation;
        rotation.setEndpoints({ node('a'), node('b') });
        const EndpointRotation::Attempt attempt = rotation.start();
        QCOMPARE(attempt.endpoint, node('a'));
        QCOMPARE(attempt.delay, 0ms);
        QCOMPARE(attempt.number, 0);
    }

    void triesTheOthersInTurnWithGrowingDelays()
    {
        EndpointRotation rotation({ 250ms, 2000ms });
        rotation.setEndpoints({ node('a'), node('b'), node('c') });
        rotation.start();
        const QList<QUrl> expectedNodes{ node('b'), node('c'), node('a'), node('b'), node('c') };
        const QList<std::chrono::milliseconds> expectedDelays{ 250ms, 500ms, 1000ms, 2000ms,
                                                               2000ms };
        for (qsizetype i = 0; i < expectedNodes.size(); ++i) {
            const EndpointRotation::Attempt attempt = rotation.next();
            QCOMPARE(attempt.endpoint, expectedNodes.at(i));
            QCOMPARE(attempt.delay, expectedDelays.at(i));
            QCOMPARE(attempt.number, int(i) + 1);
        }
    }

    void successResetsTheBackoffButNotThePosition()
    {
        EndpointRotation rotation({ 100ms, 10000ms });
        rotation.setEndpoints({ node('a'), node('b'), node('c') });
        rotation.start();
        rotation.next();
        rotation.next();
        QCOMPARE(rotation.current(), node('c'));
        rotation.succeeded(); // node c works
        QCOMPARE(rotation.failures(), 0);
        // c dies later: the next node is a, after the first delay again.
        const EndpointRotation::Attempt attempt = rotation.next();
        QCOMPARE(attempt.endpoint, node('a'));
        QCOMPARE(attempt.delay, 100ms);
        QCOMPARE(attempt.number, 1);
    }

    void aSingleEndpointIsRetriedItself()
    {
        EndpointRotation rotation;
        rotation.setEndpoints({ node('a') });
        rotation.start();
        QCOMPARE(rotation.next().endpoint, node('a'));
        QCOMPARE(rotation.next().endpoint, node('a'));
    }

    void newEndpointsKeepTheCurrentNode()
    {
        EndpointRotation rotation;
        rotation.setEndpoints({ node('a'), node('b') });
        rotation.start();
        rotation.next(); // on b
        rotation.setEndpoints({ node('a'), node('c'), node('b'), node('d') });
        QCOMPARE(rotation.current(), node('b'));
        QCOMPARE(rotation.next().endpoint, node('d'));
        QCOMPARE(rotation.next().endpoint, node('a'));
    }

    void aVanishedCurrentNodeRestartsFromTheFirst()
    {
        EndpointRotation rotation;
        rotation.setEndpoints({ node('a'), node('b') });
        rotation.start();
        rotation.next(); // on b
        rotation.setEndpoints({ node('a'), node('c') });
        QCOMPARE(rotation.current(), node('a'));
        QCOMPARE(rotation.next().endpoint, node('c'));
    }

    void noEndpoints()
    {
        EndpointRotation rotation;
        QVERIFY(rotation.start().endpoint.isEmpty());
        QVERIFY(rotation.next().endpoint.isEmpty());
    }

    void delaysAreCappedForLongOutages()
    {
        const EndpointRotation rotation({ 250ms, 30000ms });
        QCOMPARE(rotation.delayFor(0), 0ms);
        QCOMPARE(rotation.delayFor(1), 250ms);
        QCOMPARE(rotation.delayFor(8), 30000ms);
        QCOMPARE(rotation.delayFor(1000000), 30000ms);
    }
};

QTEST_GUILESS_MAIN(EndpointRotationTest)
#include "tst_endpoint_rotation.moc"
