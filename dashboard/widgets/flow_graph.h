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
// rate. A full mesh of 100 nodes has 9,900 links: only the busiest MaxDrawnEdges are drawn (and
// labelled only when there are at most MaxLabelledEdges), with a caption saying so — more would
// be unreadable and would cost the GUI thread seconds per repaint. A plain painted widget (no
// Qt Charts): it only draws what setGraph() gave it. Lives on the GUI thread.
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
    static constexpr qsizetype MaxDrawnEdges = 120;
    static constexpr qsizetype MaxLabelledEdges = 40;

    // The pen width the edge is drawn with; nullopt when it is not drawn (no such edge, 0/s, or
    // not among the busiest MaxDrawnEdges).
    std::optional<double> edgeWidth(const QString &from, const QString &to) const;
    // How many edges are drawn, and how many with a rate setGraph() was given.
    qsizetype drawnEdgeCount() const { return m_edges.size(); }
    qsizetype flowingEdgeCount() const { return m_flowingEdges; }
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

    struct DrawnEdge
    {
        Edge edge;
        double width = 0;
    };

    QStringList m_nodes;
    QList<DrawnEdge> m_edges; // the busiest, busiest first
    qsizetype m_flowingEdges = 0; // edges between known nodes with a rate above 0
};

} // namespace rt::dashboard
