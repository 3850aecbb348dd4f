#include "dashboard/widgets/flow_graph.h"

#include <QLocale>
#include <QPainter>
#include <QPainterPath>
#include <QSet>
#include <QtMath>

#include <algorithm>
#include <vector>

namespace rt::dashboard {

FlowGraph::FlowGraph(QWidget *parent) : QWidget(parent)
{
    setAccessibleName(tr("Message flow between nodes"));
}

void FlowGraph::setGraph(const QStringList &nodes, const QList<Edge> &edges)
{
    m_nodes = nodes;
    const QSet<QString> known(nodes.cbegin(), nodes.cend());
    // Choose by pointer: copying and sorting 10,000 edges (two strings each) cost the GUI
    // thread more than drawing the 120 that are kept.
    std::vector<const Edge *> flowing;
    flowing.reserve(std::size_t(edges.size()));
    for (const Edge &edge : edges) {
        if (edge.from != edge.to && edge.messagesPerSecond > 0 && known.contains(edge.from)
            && known.contains(edge.to)) {
            flowing.push_back(&edge);
        }
    }
    m_flowingEdges = qsizetype(flowing.size());
    const auto busier = [](const Edge *a, const Edge *b) {
        return a->messagesPerSecond > b->messagesPerSecond;
    };
    const auto drawn = std::min(qsizetype(flowing.size()), MaxDrawnEdges);
    std::partial_sort(flowing.begin(), flowing.begin() + drawn, flowing.end(), busier);
    m_edges.clear();
    m_edges.reserve(drawn);
    const double busiest = drawn > 0 ? flowing.front()->messagesPerSecond : 0;
    for (qsizetype i = 0; i < drawn; ++i) {
        const Edge &edge = *flowing[std::size_t(i)];
        m_edges.append(
                { edge,
                  ThinnestEdge + (WidestEdge - ThinnestEdge) * edge.messagesPerSecond / busiest });
    }
    update();
}

std::optional<double> FlowGraph::edgeWidth(const QString &from, const QString &to) const
{
    for (const DrawnEdge &drawn : m_edges) {
        if (drawn.edge.from == from && drawn.edge.to == to) {
            return drawn.width;
        }
    }
    return std::nullopt;
}

double FlowGraph::nodeRadius() const
{
    const double side = std::min(width(), height());
    const auto count = static_cast<double>(std::max<qsizetype>(1, m_nodes.size()));
    // Many nodes: smaller circles so they do not overlap on the ring.
    return std::clamp(side / (3.0 + count), 4.0, 28.0);
}

std::optional<QPointF> FlowGraph::nodeCentre(const QString &node) const
{
    const qsizetype index = m_nodes.indexOf(node);
    if (index < 0) {
        return std::nullopt;
    }
    const QPointF centre(width() / 2.0, height() / 2.0);
    if (m_nodes.size() == 1) {
        return centre;
    }
    const double ring = std::min(width(), height()) / 2.0 - nodeRadius() - 24;
    const double angle =
            2 * M_PI * static_cast<double>(index) / static_cast<double>(m_nodes.size()) - M_PI / 2;
    return centre + QPointF(std::cos(angle), std::sin(angle)) * std::max(ring, 10.0);
}

void FlowGraph::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillRect(rect(), palette().base());
    if (m_nodes.isEmpty()) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(rect(), Qt::AlignCenter, tr("No nodes"));
        return;
    }
    const double radius = nodeRadius();
    const QColor edgeColour = palette().color(QPalette::Highlight);
    const QLocale locale;
    const bool labelled = m_edges.size() <= MaxLabelledEdges;
    // Thinnest first, so the busiest links are drawn on top.
    for (qsizetype i = m_edges.size() - 1; i >= 0; --i) {
        const DrawnEdge &drawn = m_edges.at(i);
        const Edge &edge = drawn.edge;
        const double width = drawn.width;
        const QPointF from = *nodeCentre(edge.from);
        const QPointF to = *nodeCentre(edge.to);
        const QLineF line(from, to);
        // Both directions of a pair are drawn side by side: shift each to its own right.
        const QPointF normal = QPointF(-line.dy(), line.dx()) / std::max(1.0, line.length());
        const QPointF shift = normal * (3 + width / 2);
        const QLineF shifted(from + shift, to + shift);
        const double inset = radius / std::max(1.0, shifted.length());
        const QPointF start = shifted.pointAt(inset);
        const QPointF end = shifted.pointAt(1 - inset);
        painter.setPen(QPen(edgeColour, width, Qt::SolidLine, Qt::RoundCap));
        painter.drawLine(start, end);
        // Arrow head at the receiving end.
        const QLineF back(end, start);
        const double head = 6 + width;
        QPainterPath arrow;
        arrow.moveTo(end);
        arrow.lineTo(back.pointAt(head / std::max(1.0, back.length())) + normal * (head / 2));
        arrow.lineTo(back.pointAt(head / std::max(1.0, back.length())) - normal * (head / 2));
        arrow.closeSubpath();
        painter.fillPath(arrow, edgeColour);
        if (labelled) {
            painter.setPen(palette().color(QPalette::Text));
            painter.drawText(QLineF(start, end).pointAt(0.5) + shift * 2,
                             tr("%1/s").arg(locale.toString(edge.messagesPerSecond, 'f', 1)));
        }
    }
    if (m_flowingEdges > m_edges.size()) {
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(rect().adjusted(6, 4, -6, -4), Qt::AlignLeft | Qt::AlignTop,
                         tr("The busiest %1 of %2 links").arg(m_edges.size()).arg(m_flowingEdges));
    }
    for (const QString &node : std::as_const(m_nodes)) {
        const QPointF centre = *nodeCentre(node);
        painter.setPen(QPen(palette().color(QPalette::Dark), 1.5));
        painter.setBrush(palette().color(QPalette::Button));
        painter.drawEllipse(centre, radius, radius);
        painter.setPen(palette().color(QPalette::Text));
        const QRectF label(centre.x() - 80, centre.y() + radius + 2, 160, 18);
        painter.drawText(label, Qt::AlignHCenter | Qt::AlignTop, node);
    }
}

} // namespace rt::dashboard
