#pragma once

#include <QObject>

class QSocketNotifier;

namespace rt::app {

// Turns SIGINT and SIGTERM (stop) and SIGHUP (reload the certificates) into Qt signals on the
// main thread (self-pipe: the handler only writes a byte). Lives on the main thread; one per
// process.
class UnixSignals : public QObject
{
    Q_OBJECT
public:
    explicit UnixSignals(QObject *parent = nullptr);
    ~UnixSignals() override;

Q_SIGNALS:
    void terminationRequested(int signalNumber);
    void reloadRequested();

private:
    void onReadable();
    QSocketNotifier *m_notifier = nullptr;
};

} // namespace rt::app
