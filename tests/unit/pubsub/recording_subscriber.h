#pragma once

#include "server/pubsub/hub.h"

#include <QByteArray>
#include <QList>
#include <QMutex>
#include <QSemaphore>
#include <QThread>

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
            const QMutexLocker lock(&m_mutex);
            m_records.append(Record{ frame.bytes, frame.isBinary, QThread::currentThread(),
                                     message.excludedMember() });
        }
        delivered.release();
    }

    QList<Record> records() const
    {
        const QMutexLocker lock(&m_mutex);
        return m_records;
    }
    qsizetype count() const
    {
        const QMutexLocker lock(&m_mutex);
        return m_records.size();
    }
    void clear()
    {
        const QMutexLocker lock(&m_mutex);
        m_records.clear();
    }

    QSemaphore delivered;

private:
    mutable QMutex m_mutex;
    QList<Record> m_records; // guarded by m_mutex
};

} // namespace rt::pubsub::test
