#include "server/cdc/delivery_sequence.h"

#include <utility>

namespace rt::cdc {

DeliveryLog::DeliveryLog(quint64 logId, qsizetype maxBytes) : m_logId(logId), m_maxBytes(maxBytes)
{ }

int DeliveryLog::append(QByteArray bytes)
{
    m_bytes += bytes.size();
    m_frames.push_back(Frame{ m_nextSeq++, std::move(bytes) });
    int forgotten = 0;
    // The newest frame always stays, whatever its size: a bound never stops deliveries.
    while (m_bytes > m_maxBytes && m_frames.size() > 1) {
        forgetOldest();
        ++forgotten;
    }
    return forgotten;
}

bool DeliveryLog::acknowledge(quint64 seq)
{
    if (seq <= m_acknowledged || seq >= m_nextSeq) {
        return false; // old news, or a frame never sent (a confused or hostile peer)
    }
    m_acknowledged = seq;
    while (!m_frames.empty() && m_frames.front().seq <= seq) {
        m_bytes -= m_frames.front().bytes.size();
        m_frames.pop_front();
    }
    return true;
}

bool DeliveryLog::forgetOldest()
{
    if (m_frames.empty()) {
        return false;
    }
    m_bytes -= m_frames.front().bytes.size();
    m_frames.pop_front();
    ++m_forgotten;
    return true;
}

DeliveryOrder::Outcome DeliveryOrder::offer(quint64 logId, quint64 seq, quint64 floor)
{
    if (logId != m_logId) {
        // A new log (the owner changed or restarted, or this node's process is new to it):
        // it starts at the first frame the owner keeps.
        if (seq != floor) {
            return { Verdict::Gap, 0 };
        }
        m_logId = logId;
        m_lastSeq = seq;
        return { Verdict::Take, floor > 1 ? floor - 1 : 0 };
    }
    if (seq <= m_lastSeq) {
        return { Verdict::Repeat, 0 };
    }
    if (seq == m_lastSeq + 1) {
        m_lastSeq = seq;
        return { Verdict::Take, 0 };
    }
    if (seq == floor) {
        // The owner no longer has m_lastSeq + 1 .. floor - 1.
        const quint64 skipped = floor - m_lastSeq - 1;
        m_lastSeq = seq;
        return { Verdict::Take, skipped };
    }
    return { Verdict::Gap, 0 };
}

} // namespace rt::cdc
