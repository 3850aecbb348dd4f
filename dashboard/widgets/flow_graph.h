#pragma once

#include <QHash>
#include <QList>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>

namespace rt::dashboard {

// The message-flow graph: the cluster's nodes on a circle, an arrow per node-to-node direction
// whose width follows its messages per second (relative to the busiest link), labelled with the
// rate. A plain painted widget (no Qt Charts): it only draws what setGraph() gave it.
// Lives on the GUI thread.
class FlowGraph : public QWidget
{
    Q_OBJECT
public:
    struct Edge
    {
        QString from;
        QString to;
        double messagesPerSecond = 0;
    };

    explicit FlowGraph(QWidget *parent = nullptr);

    // `nodes` sorted; edges between unknown nodes are ignored.
    void setGraph(const QStringList &nodes, const QList<Edge> &edges);

    QStringList nodes() const { return m_nodes; }
    // The pen width the edge is drawn with; nullopt when it is not drawn (no such edge, or 0/s).
    std::optional<double> edgeWidth(const QString &from, const QString &to) const;
    // Where a node's circle is centred, in widget coordinates.
    std::optional<QPointF> nodeCentre(const QString &node) const;

    QSize sizeHint() const override { return { 480, 360 }; }
    QSize minimumSizeHint() const override { return { 200, 160 }; }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    static constexpr double ThinnestEdge = 1.0;
    static constexpr double WidestEdge = 10.0;
    double nodeRadius() const;

    QStringList m_nodes;
    QList<Edge> m_edges;
    double m_busiest = 0;
};

} // namespace rt::dashboard
