#pragma once

#include "server/pubsub/hub.h"
#include "tests/support/threads/semaphore.h"

#include <QByteArray>
#include <QList>
#include <QThread>

#include <mutex>

namespace rt::pubsub::test {

// A channel stand-in for the pubsub tests: records every frame the hub hands it (the bytes, which
// share storage with the message's encoded frame), on which thread, and releases `delivered` once
// per frame so that a test can await deliveries on other threads without sleeping.
class RecordingSubscriber final : public Subscriber
{
public:
    struct Record
    {
        QByteArray bytes;
        bool isBinary = false;
        QThread *thread = nullptr;
        quint64 excludedMember = 0;
    };

    void deliver(const OutboundMessage &message, const OutboundMessage::Frame &frame) override
    {
        {
            const std::lock_guard lock(m_mutex);
            m_records.append(Record{ frame.bytes, frame.isBinary, QThread::currentThread(),
                                     message.excludedMember() });
        }
        delivered.release();
    }

    QList<Record> records() const
    {
        const std::lock_guard lock(m_mutex);
        return m_records;
    }
    qsizetype count() const
    {
        const std::lock_guard lock(m_mutex);
        return m_records.size();
    }
    void clear()
    {
        const std::lock_guard lock(m_mutex);
        m_records.clear();
    }

    rt::test::Semaphore delivered;

private:
    mutable std::mutex m_mutex;
    QList<Record> m_records; // guarded by m_mutex
};

} // namespace rt::pubsub::test
