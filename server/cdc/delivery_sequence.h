#pragma once

#include <QByteArray>
#include <QtGlobal>

#include <deque>

// Reliable, ordered change deliveries from a stream's owner to another node, as pure logic
// (the I/O is StreamDeliveries'). Node links deliver at most once: frames in a socket that
// breaks and frames queued for a peer that leaves the membership are gone. The owner therefore
// numbers each tenant's deliveries to each node process in a log, keeps them until the
// receiver acknowledges them, and sends the rest again when the link comes back; the receiver
// takes frames strictly in log order and drops repeats, so every change reaches it once, in
// commit order, unless the owner had to forget frames (its bound), which the receiver learns
// from the floor.
namespace rt::cdc {

// The owner's side: one tenant's deliveries to one node process. Frames are numbered from 1;
// the log keeps every frame not yet acknowledged, up to `maxBytes` (then the oldest go, and
// the floor rises past them).
class DeliveryLog
{
public:
    struct Frame
    {
        quint64 seq = 0;
        QByteArray bytes;
    };

    DeliveryLog(quint64 logId, qsizetype maxBytes);

    quint64 logId() const { return m_logId; }
    // The number the next appended frame gets.
    quint64 nextSeq() const { return m_nextSeq; }
    // The oldest frame kept (nextSeq() when none is).
    quint64 floor() const { return m_frames.empty() ? m_nextSeq : m_frames.front().seq; }
    // Keeps frame nextSeq() (encoded with that number); returns how many unacknowledged
    // frames the bound made it forget.
    int append(QByteArray bytes);
    // The receiver has every frame up to `seq`: they are forgotten. True when that was news.
    bool acknowledge(quint64 seq);
    // Forgets the oldest kept frame (another log of the same node needs the room); false when
    // none is kept.
    bool forgetOldest();
    const std::deque<Frame> &unacknowledged() const { return m_frames; }
    qsizetype bytes() const { return m_bytes; }
    // Unacknowledged frames forgotten to keep the bound, in all.
    quint64 forgotten() const { return m_forgotten; }

private:
    quint64 m_logId;
    qsizetype m_maxBytes;
    quint64 m_nextSeq = 1;
    quint64 m_acknowledged = 0;
    std::deque<Frame> m_frames;
    qsizetype m_bytes = 0;
    quint64 m_forgotten = 0;
};

// The receiver's side: which frames of one sender's log for one tenant it takes. A frame is
// taken when it is the next one of the current log, or the first the owner still keeps
// (its floor) of a new log or after frames the owner forgot; anything else is a repeat
// (dropped) or comes after a gap (dropped: the owner sends it again after the missing ones).
class DeliveryOrder
{
public:
    enum class Verdict { Take, Repeat, Gap };
    struct Outcome
    {
        Verdict verdict = Verdict::Gap;
        // Frames the owner forgot before this one (taken with a skip; 0 otherwise).
        quint64 skipped = 0;
    };

    Outcome offer(quint64 logId, quint64 seq, quint64 floor);
    quint64 logId() const { return m_logId; }
    // The last frame taken (0: none of the current log).
    quint64 lastSeq() const { return m_lastSeq; }

private:
    quint64 m_logId = 0;
    quint64 m_lastSeq = 0;
};

} // namespace rt::cdc
