#pragma once

#include "shared/api/cluster_snapshot.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QCoreApplication>
#include <QString>

// The live feed's Phoenix conversation without the socket (docs/admin-api.md): the frames the
// dashboard sends (join admin:cluster, heartbeats) and what each frame from the server means.
// Pure apart from its own refs; one per connection (reset() for a new one). LiveFeed drives it.
namespace rt::dashboard {

class LiveFeedProtocol
{
    Q_DECLARE_TR_FUNCTIONS(LiveFeedProtocol)
public:
    static constexpr QByteArrayView Topic = "admin:cluster";

    struct Event
    {
        enum class Kind {
            Joined, // the server accepted the join: snapshots follow
            JoinRefused, // text: the server's reason
            Snapshot, // snapshot holds it
            SnapshotRejected, // a snapshot push that could not be read (text); the feed goes on
            HeartbeatAcknowledged,
            ChannelClosed, // phx_close / phx_error on admin:cluster: no more snapshots come
            Malformed, // not a Phoenix V1 frame (text)
            Ignored, // anything else (replies to nothing we asked, other events)
        };
        Kind kind = Kind::Ignored;
        api::ClusterSnapshot snapshot;
        QString text; // in words, translated
    };

    // Forgets the refs of the previous connection.
    void reset();

    // {"topic":"admin:cluster","event":"phx_join","payload":{},"ref":"<n>","join_ref":"<n>"}
    QByteArray joinFrame();
    // {"topic":"phoenix","event":"heartbeat","payload":{},"ref":"<n>"}; the heartbeat is
    // pending until its reply arrives.
    QByteArray heartbeatFrame();
    bool isHeartbeatPending() const { return !m_heartbeatRef.isEmpty(); }
    bool isJoined() const { return m_joined; }

    // What a text frame from the server means.
    Event handleFrame(QByteArrayView text);

    // The one place a snapshot payload is parsed (JSON text of a ClusterSnapshot); a pure
    // function, so it can move to a worker thread if snapshots grow large.
    static Result<api::ClusterSnapshot> parseSnapshot(QByteArrayView payload);

private:
    QByteArray nextRef(); // the JSON token "\"<n>\""

    qint64 m_lastRef = 0;
    QByteArray m_joinRef; // JSON token; empty: no join sent
    QByteArray m_heartbeatRef; // JSON token; empty: none pending
    bool m_joined = false;
};

} // namespace rt::dashboard
