#pragma once

#include "shared/core/result.h"

#include <QByteArrayView>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

// The admin API's history of every node's own figures (GET /api/admin/history), as the server
// writes it and the dashboard reads it: one sample per node every 5 s over the last hour, so a
// dashboard that opens shows full charts at once. Reading is strict about types (a sample of
// the wrong shape is an error that names it) and keeps the snapshot's leniency about absent
// fields.
namespace rt::api {

// One node's figures at one moment.
struct NodeSample
{
    qint64 atMs = 0; // wall clock, ms since the epoch
    double cpuCores = 0; // the process's CPU, in cores (1.0: one core busy)
    qint64 residentBytes = 0;
    qint64 connections = 0;
    qint64 channels = 0;
    double messagesInPerSecond = 0;
    double messagesOutPerSecond = 0;
    double loopLagMs = 0; // the largest of its workers'
    std::optional<double> load; // the placement load (host 5-minute average); none yet

    friend bool operator==(const NodeSample &, const NodeSample &) = default;
};

struct NodeHistory
{
    QString id;
    QList<NodeSample> samples; // oldest first

    friend bool operator==(const NodeHistory &, const NodeHistory &) = default;
};

struct ClusterHistory
{
    qint64 takenAtMs = 0;
    QString answeredBy;
    qint64 intervalMs = 5000;
    QList<NodeHistory> nodes; // sorted by id

    // {"taken_at", "answered_by", "interval_ms", "columns": [...],
    //  "nodes": [{"id", "samples": [[at, cpu, rss_bytes, connections, channels,
    //  messages_in_per_s, messages_out_per_s, loop_lag_ms, load|null], ...]}]}
    QJsonObject toJson() const;
    static Result<ClusterHistory> fromJson(const QJsonObject &object);
    static Result<ClusterHistory> fromJson(QByteArrayView json);

    friend bool operator==(const ClusterHistory &, const ClusterHistory &) = default;
};

} // namespace rt::api
