#include "dashboard/views/placement_page.h"

#include "dashboard/models/nodes_model.h"
#include "dashboard/models/placement_model.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

namespace rt::dashboard {

// Tenants with the chosen node as stream owner or among the nodes holding their clients.
class NodeFilterProxy : public KeyedSortProxy
{
public:
    using KeyedSortProxy::KeyedSortProxy;

    void setNode(const QString &nodeId)
    {
        m_node = nodeId;
        invalidateFilter();
    }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override
    {
        if (m_node.isEmpty()) {
            return true;
        }
        const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
        return index.data(PlacementModel::StreamOwnerRole).toString() == m_node
                || index.data(PlacementModel::NodesRole).toStringList().contains(m_node);
    }

private:
    QString m_node;
};

namespace {

// The stream owner column stands out: bold on the highlight colour, so the singletons' homes
// are seen at a glance.
class OwnerHighlight : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        if (index.data(PlacementModel::StreamOwnerRole).toString().isEmpty()) {
            return;
        }
        option->font.setBold(true);
        option->backgroundBrush = option->palette.brush(QPalette::AlternateBase);
        option->palette.setColor(QPalette::Text, option->palette.color(QPalette::Link));
    }
};

} // namespace

PlacementPage::PlacementPage(PlacementModel *placement, NodesModel *nodes, QWidget *parent)
    : QWidget(parent),
      m_placement(placement),
      m_nodes(nodes),
      m_filter(new PlacementFilterProxy(this)),
      m_byNode(new NodeFilterProxy(this)),
      m_tenantFilter(new QLineEdit(this)),
      m_regionFilter(new QComboBox(this)),
      m_nodeFilter(new QComboBox(this)),
      m_table(new QTableView(this))
{
    m_filter->setSourceModel(m_placement);
    m_byNode->setSourceModel(m_filter);
    m_byNode->setSortRole(KeyedTableModel::SortRole);
    m_table->setModel(m_byNode);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(PlacementModel::TenantColumn, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setItemDelegateForColumn(PlacementModel::StreamOwnerColumn,
                                      new OwnerHighlight(m_table)); // owned by table
    m_tenantFilter->setPlaceholderText(tr("Filter tenants"));
    m_tenantFilter->setClearButtonEnabled(true);
    updateRegions(m_placement->regions());
    updateNodes();

    auto *filters = new QHBoxLayout; // owned by the page's layout
    filters->addWidget(m_tenantFilter, 2);
    filters->addWidget(new QLabel(tr("Region:"), this)); // child
    filters->addWidget(m_regionFilter, 1);
    filters->addWidget(new QLabel(tr("Node:"), this)); // child
    filters->addWidget(m_nodeFilter, 1);
    auto *legend = new QLabel(tr("Highlighted: the node that runs the tenant's change stream "
                                 "(its per-tenant singleton)."),
                              this); // child
    legend->setWordWrap(true);
    auto *layout = new QVBoxLayout(this); // owned by this widget
    layout->addLayout(filters);
    layout->addWidget(m_table);
    layout->addWidget(legend);

    connect(m_tenantFilter, &QLineEdit::textChanged, m_filter,
            &PlacementFilterProxy::setTenantFilter);
    connect(m_regionFilter, &QComboBox::currentIndexChanged, this,
            [this] { m_filter->setRegionFilter(m_regionFilter->currentData().toString()); });
    connect(m_nodeFilter, &QComboBox::currentIndexChanged, this,
            [this] { m_byNode->setNode(m_nodeFilter->currentData().toString()); });
    connect(m_placement, &PlacementModel::regionsChanged, this, &PlacementPage::updateRegions);
    connect(m_nodes, &QAbstractItemModel::rowsInserted, this, &PlacementPage::updateNodes);
    connect(m_nodes, &QAbstractItemModel::rowsRemoved, this, &PlacementPage::updateNodes);
    connect(m_nodes, &QAbstractItemModel::modelReset, this, &PlacementPage::updateNodes);
}

PlacementPage::~PlacementPage() = default;

int PlacementPage::visibleRows() const
{
    return m_byNode->rowCount();
}

namespace {

// Refills a filter's choices ("All" first, then `values`), keeping the current choice if it
// still exists.
void refill(QComboBox *box, const QString &all, const QStringList &values)
{
    const QString current = box->currentData().toString();
    const QSignalBlocker blocker(box);
    box->clear();
    box->addItem(all, QString());
    for (const QString &value : values) {
        box->addItem(value, value);
    }
    const int index = box->findData(current);
    box->setCurrentIndex(index < 0 ? 0 : index);
}

} // namespace

void PlacementPage::updateRegions(const QStringList &regions)
{
    const QString before = m_regionFilter->currentData().toString();
    refill(m_regionFilter, tr("All regions"), regions);
    if (m_regionFilter->currentData().toString() != before) {
        m_filter->setRegionFilter(m_regionFilter->currentData().toString());
    }
}

void PlacementPage::updateNodes()
{
    const QString before = m_nodeFilter->currentData().toString();
    refill(m_nodeFilter, tr("All nodes"), m_nodes->nodeIds());
    if (m_nodeFilter->currentData().toString() != before) {
        m_byNode->setNode(m_nodeFilter->currentData().toString());
    }
}

} // namespace rt::dashboard
