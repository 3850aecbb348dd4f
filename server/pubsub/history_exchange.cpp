#include "server/pubsub/history_exchange.h"

#include "server/cluster/links/node_links.h"
#include "server/pubsub/cluster_envelope.h"
#include "server/pubsub/cluster_interest.h"
#include "server/pubsub/logging.h"

#include <QLoggingCategory>

namespace rt::pubsub {

HistoryExchange::HistoryExchange(QString selfNodeId, cluster::links::NodeLinks &links,
                                 TopicHistory &history, SettingsFor settingsFor,
                                 CountingResolver resolver, QObject *parent)
    : QObject(parent),
      m_self(std::move(selfNodeId)),
      m_links(links),
      m_history(history),
      m_settingsFor(std::move(settingsFor)),
      m_resolver(std::move(resolver)),
      m_expiry(this)
{
    m_clock.start();
    connect(&m_links, &cluster::links::NodeLinks::frameReceived, this, &HistoryExchange::onFrame);
    connect(&m_links, &cluster::links::NodeLinks::peerDisconnected, this,
            &HistoryExchange::failAllFor);
    m_expiry.setInterval(500);
    connect(&m_expiry, &QTimer::timeout, this, &HistoryExchange::expire);
}

void HistoryExchange::ask(const QString &home, history_wire::Request question, QObject *receiver,
                          Answered answered)
{
    QMetaObject::invokeMethod(
            this,
            [this, home, question = std::move(question), receiver,
             answered = std::move(answered)]() mutable {
                start(home, std::move(question), receiver, std::move(answered));
            },
            Qt::QueuedConnection);
}

void HistoryExchange::start(const QString &home, history_wire::Request question, QObject *receiver,
                            Answered answered)
{
    question.requestId = m_nextRequestId++;
    const quint64 id = question.requestId;
    m_pending.insert(id,
                     Pending{ home,
                              receiver,
                              std::move(answered),
                              {},
                              0,
                              m_clock.elapsed() + AnswerTimeoutMs });
    if (!m_expiry.isActive()) {
        m_expiry.start();
    }
    if (!m_links.isConnected(home)
        || !m_links.send(home, cluster_frame::HistoryRequest, history_wire::encodeRequest(question),
                         QString::fromUtf8(question.topic.id()))) {
        fail(id, TopicHistory::RecoveryFailure::Unavailable);
    }
}

void HistoryExchange::onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload)
{
    if (kind == cluster_frame::HistoryRequest) {
        answerRequest(fromNodeId, payload);
    } else if (kind == cluster_frame::HistoryReply) {
        takeReply(fromNodeId, payload);
    }
}

void HistoryExchange::answerRequest(const QString &fromNodeId, const QByteArray &payload)
{
    auto request = history_wire::decodeRequest(payload);
    if (!request) {
        qCWarning(lcPubsub).noquote()
                << "bad history request from" << fromNodeId << "-" << request.error();
        return;
    }
    const HistorySettings settings = m_settingsFor(request->topic.tenant());
    TopicHistory::Recovery recovery;
    if (!settings.enabled()) {
        recovery.failure = TopicHistory::RecoveryFailure::Disabled;
    } else if (request->mode == history_wire::Request::Mode::Position) {
        recovery = m_history.since(request->topic, request->from, settings);
    } else {
        recovery = m_history.sinceTime(request->topic, request->sinceMs, settings);
    }
    const QString key = QString::fromUtf8(request->topic.id());
    for (const history_wire::ReplyChunk &chunk :
         history_wire::replyChunks(request->requestId, recovery, ChunkBytes)) {
        if (!m_links.send(fromNodeId, cluster_frame::HistoryReply,
                          history_wire::encodeReplyChunk(chunk), key)) {
            qCWarning(lcPubsub).noquote() << "history reply to" << fromNodeId << "dropped";
            return; // the asking node times out
        }
    }
}

void HistoryExchange::takeReply(const QString &fromNodeId, const QByteArray &payload)
{
    auto chunk = history_wire::decodeReplyChunk(payload);
    if (!chunk) {
        qCWarning(lcPubsub).noquote()
                << "bad history reply from" << fromNodeId << "-" << chunk.error();
        return; // the question times out
    }
    const auto it = m_pending.find(chunk->requestId);
    if (it == m_pending.end() || it->home != fromNodeId) {
        return; // answered already (timed out), or not ours
    }
    Pending &pending = it.value();
    for (const QByteArray &bytes : std::as_const(chunk->envelopes)) {
        pending.bytes += bytes.size();
        auto envelope = decodeEnvelope(bytes);
        if (!envelope.ok() || !envelope->position.isSet() || envelope->topic.tenant().isEmpty()) {
            fail(chunk->requestId, TopicHistory::RecoveryFailure::Unavailable);
            return;
        }
        DeliveryCounting counting;
        if (m_resolver) {
            counting = m_resolver(envelope->topic, envelope->countsAsBroadcast);
        }
        pending.gathered.messages.push_back(envelope->toMessage(std::move(counting), m_self));
    }
    if (pending.bytes > MaxAnswerBytes) {
        fail(chunk->requestId, TopicHistory::RecoveryFailure::Unavailable);
        return;
    }
    if (!chunk->last) {
        return;
    }
    TopicHistory::Recovery recovery = std::move(pending.gathered);
    recovery.failure = chunk->failure;
    recovery.top = chunk->top;
    if (recovery.failure != TopicHistory::RecoveryFailure::None) {
        recovery.messages.clear();
    }
    finish(chunk->requestId, std::move(recovery));
}

void HistoryExchange::fail(quint64 requestId, TopicHistory::RecoveryFailure failure)
{
    TopicHistory::Recovery recovery;
    recovery.failure = failure;
    finish(requestId, std::move(recovery));
}

void HistoryExchange::finish(quint64 requestId, TopicHistory::Recovery recovery)
{
    Pending pending = m_pending.take(requestId);
    if (!pending.answered) {
        return;
    }
    QMetaObject::invokeMethod(
            pending.receiver,
            [answered = std::move(pending.answered), recovery = std::move(recovery)]() mutable {
                answered(std::move(recovery));
            },
            Qt::QueuedConnection);
    if (m_pending.isEmpty()) {
        m_expiry.stop();
    }
}

void HistoryExchange::failAllFor(const QString &home)
{
    QList<quint64> ids;
    for (auto it = m_pending.cbegin(); it != m_pending.cend(); ++it) {
        if (it->home == home) {
            ids.append(it.key());
        }
    }
    for (const quint64 id : std::as_const(ids)) {
        fail(id, TopicHistory::RecoveryFailure::Unavailable);
    }
}

void HistoryExchange::expire()
{
    const qint64 nowMs = m_clock.elapsed();
    QList<quint64> ids;
    for (auto it = m_pending.cbegin(); it != m_pending.cend(); ++it) {
        if (it->deadlineMs <= nowMs) {
            ids.append(it.key());
        }
    }
    for (const quint64 id : std::as_const(ids)) {
        qCWarning(lcPubsub).noquote() << "history request to" << m_pending.value(id).home
                                      << "unanswered after" << AnswerTimeoutMs << "ms";
        fail(id, TopicHistory::RecoveryFailure::Unavailable);
    }
}

} // namespace rt::pubsub
