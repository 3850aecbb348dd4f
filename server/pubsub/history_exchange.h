#pragma once

#include "server/pubsub/history_wire.h"
#include "server/pubsub/topic_history.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <functional>

namespace rt::cluster::links {
class NodeLinks;
}

namespace rt::pubsub {

// Topic histories across nodes: asks a tenant's home what a recovering join on this node
// missed, and answers such questions from this node's TopicHistory (docs/design-notes.md,
// "Positions, history and recovery"). An answer comes back within AnswerTimeoutMs, if only to
// say that the history is unavailable (no link, no answer, an answer too large to hold).
//
// Lives on the cluster thread with the links; ask() may be called from any thread.
class HistoryExchange final : public QObject
{
    Q_OBJECT
public:
    using Answered = std::function<void(TopicHistory::Recovery)>;
    using SettingsFor = std::function<HistorySettings(const QByteArray &tenantId)>;
    using CountingResolver =
            std::function<DeliveryCounting(const TopicKey &topic, bool isBroadcast)>;
    static constexpr qint64 AnswerTimeoutMs = 5000;
    // What the home puts in one reply frame (far below the links' frame bound) and what this
    // node gathers for one answer at most.
    static constexpr qsizetype ChunkBytes = qsizetype{ 1024 } * 1024;
    static constexpr qint64 MaxAnswerBytes = 256LL * 1024 * 1024;

    // `links` and `history` must outlive it.
    HistoryExchange(QString selfNodeId, cluster::links::NodeLinks &links, TopicHistory &history,
                    SettingsFor settingsFor, CountingResolver resolver, QObject *parent = nullptr);

    // Any thread. Asks `home` the question (its requestId is assigned here); `answered` runs
    // on `receiver`'s thread, once. `receiver` must outlive the answer (a long-lived object of
    // the caller's thread: guard short-lived objects inside `answered`).
    void ask(const QString &home, history_wire::Request question, QObject *receiver,
             Answered answered);

private:
    struct Pending
    {
        QString home;
        QObject *receiver = nullptr;
        Answered answered;
        TopicHistory::Recovery gathered;
        qint64 bytes = 0;
        qint64 deadlineMs = 0;
    };

    void start(const QString &home, history_wire::Request question, QObject *receiver,
               Answered answered);
    void onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload);
    void answerRequest(const QString &fromNodeId, const QByteArray &payload);
    void takeReply(const QString &fromNodeId, const QByteArray &payload);
    // Ends the question with `failure` (nothing gathered is delivered).
    void fail(quint64 requestId, TopicHistory::RecoveryFailure failure);
    void finish(quint64 requestId, TopicHistory::Recovery recovery);
    void failAllFor(const QString &home);
    void expire();

    const QString m_self;
    cluster::links::NodeLinks &m_links;
    TopicHistory &m_history;
    SettingsFor m_settingsFor;
    CountingResolver m_resolver;
    QHash<quint64, Pending> m_pending;
    quint64 m_nextRequestId = 1;
    QTimer m_expiry; // a child
    QElapsedTimer m_clock;
};

} // namespace rt::pubsub
