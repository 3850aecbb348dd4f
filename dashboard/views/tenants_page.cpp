#include "dashboard/views/tenants_page.h"

#include "dashboard/models/tenants_model.h"
#include "shared/api/tenant_summary.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

namespace rt::dashboard {

namespace {

QSpinBox *limitBox(qint64 value, QWidget *parent)
{
    auto *box = new QSpinBox(parent); // owned by parent
    box->setRange(0, 1'000'000'000);
    box->setValue(static_cast<int>(value));
    return box;
}

} // namespace

TenantDialog::TenantDialog(const api::TenantSummary *existing, QWidget *parent)
    : QDialog(parent),
      m_new(existing == nullptr),
      m_externalId(new QLineEdit(this)),
      m_name(new QLineEdit(this)),
      m_secret(new QLineEdit(this)),
      m_maxUsers(limitBox(existing ? existing->maxConcurrentUsers : 200, this)),
      m_maxChannels(limitBox(existing ? existing->maxChannelsPerClient : 100, this)),
      m_maxEvents(limitBox(existing ? existing->maxEventsPerSecond : 100, this)),
      m_maxJoins(limitBox(existing ? existing->maxJoinsPerSecond : 100, this)),
      m_privateOnly(new QCheckBox(tr("Private channels only"), this)),
      m_presence(new QCheckBox(tr("Presence enabled for every channel"), this)),
      m_problem(new QLabel(this))
{
    setWindowTitle(existing == nullptr ? tr("New tenant")
                                       : tr("Edit tenant %1").arg(existing->externalId));
    if (existing != nullptr) {
        m_externalId->setText(existing->externalId);
        m_externalId->setReadOnly(true);
        m_originalName = existing->name.value_or(QString());
        m_name->setText(m_originalName);
        m_original[0] = existing->maxConcurrentUsers;
        m_original[1] = existing->maxChannelsPerClient;
        m_original[2] = existing->maxEventsPerSecond;
        m_original[3] = existing->maxJoinsPerSecond;
        m_originalPrivateOnly = existing->privateOnly;
        m_originalPresence = existing->presenceEnabled;
        m_privateOnly->setChecked(existing->privateOnly);
        m_presence->setChecked(existing->presenceEnabled);
        m_secret->setPlaceholderText(tr("unchanged"));
    } else {
        m_externalId->setPlaceholderText(tr("the first label of the tenant's host name"));
        m_secret->setPlaceholderText(tr("at least 32 characters"));
    }
    m_secret->setEchoMode(QLineEdit::Password);
    m_problem->setWordWrap(true);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel,
                                         this); // child
    m_ok = buttons->button(QDialogButtonBox::Ok);
    m_ok->setText(m_new ? tr("Create") : tr("Save"));

    auto *form = new QFormLayout; // owned by the dialog's layout
    form->addRow(tr("External id:"), m_externalId);
    form->addRow(tr("Name:"), m_name);
    form->addRow(tr("JWT secret:"), m_secret);
    form->addRow(tr("Max concurrent users:"), m_maxUsers);
    form->addRow(tr("Max channels per client:"), m_maxChannels);
    form->addRow(tr("Max events per second:"), m_maxEvents);
    form->addRow(tr("Max joins per second:"), m_maxJoins);
    form->addRow(QString(), m_privateOnly);
    form->addRow(QString(), m_presence);
    auto *layout = new QVBoxLayout(this); // owned by the dialog
    layout->addLayout(form);
    layout->addWidget(m_problem);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_externalId, &QLineEdit::textChanged, this, &TenantDialog::validate);
    connect(m_secret, &QLineEdit::textChanged, this, &TenantDialog::validate);
    validate();
}

TenantChanges TenantDialog::changes() const
{
    TenantChanges changes;
    const QString name = m_name->text().trimmed();
    const QString secret = m_secret->text();
    const qint64 limits[4] = { m_maxUsers->value(), m_maxChannels->value(), m_maxEvents->value(),
                               m_maxJoins->value() };
    std::optional<qint64> *targets[4] = { &changes.maxConcurrentUsers,
                                          &changes.maxChannelsPerClient,
                                          &changes.maxEventsPerSecond, &changes.maxJoinsPerSecond };
    if (m_new) {
        changes.externalId = m_externalId->text().trimmed();
    }
    if (m_new || name != m_originalName) {
        changes.name = name;
    }
    if (!secret.isEmpty()) {
        changes.jwtSecret = secret;
    }
    for (int i = 0; i < 4; ++i) {
        if (m_new || limits[i] != m_original[i]) {
            *targets[i] = limits[i];
        }
    }
    if (m_new || m_privateOnly->isChecked() != m_originalPrivateOnly) {
        changes.privateOnly = m_privateOnly->isChecked();
    }
    if (m_new || m_presence->isChecked() != m_originalPresence) {
        changes.presenceEnabled = m_presence->isChecked();
    }
    return changes;
}

QString TenantDialog::problem() const
{
    if (!m_new) {
        return {};
    }
    if (m_externalId->text().trimmed().isEmpty()) {
        return tr("Enter the tenant's external id.");
    }
    if (m_secret->text().isEmpty()) {
        return tr("Enter the tenant's JWT secret.");
    }
    return {};
}

void TenantDialog::validate()
{
    const QString text = problem();
    m_problem->setText(text);
    m_problem->setVisible(!text.isEmpty());
    m_ok->setEnabled(text.isEmpty());
}

TenantsPage::TenantsPage(TenantsModel *model, QWidget *parent)
    : QWidget(parent),
      m_model(model),
      m_rows(new QSortFilterProxyModel(this)),
      m_table(new QTableView(this)),
      m_filter(new QLineEdit(this)),
      m_refresh(new QPushButton(tr("Re&fresh"), this)),
      m_create(new QPushButton(tr("&New tenant…"), this)),
      m_edit(new QPushButton(tr("&Edit…"), this)),
      m_suspend(new QPushButton(tr("&Suspend"), this)),
      m_resume(new QPushButton(tr("&Resume"), this)),
      m_status(new QLabel(this))
{
    m_rows->setSourceModel(m_model);
    m_rows->setSortRole(KeyedTableModel::SortRole);
    m_rows->setFilterKeyColumn(-1);
    m_rows->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_table->setModel(m_rows);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(TenantsModel::ExternalIdColumn, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_filter->setPlaceholderText(tr("Filter tenants"));
    m_filter->setClearButtonEnabled(true);
    m_suspend->setToolTip(tr("Disconnects the tenant's clients and refuses new ones."));

    auto *buttons = new QHBoxLayout; // owned by the page's layout
    buttons->addWidget(m_filter, 1);
    for (QPushButton *button : { m_refresh, m_create, m_edit, m_suspend, m_resume }) {
        buttons->addWidget(button);
    }
    auto *layout = new QVBoxLayout(this); // owned by this widget
    layout->addLayout(buttons);
    layout->addWidget(m_table);
    layout->addWidget(m_status);

    connect(m_filter, &QLineEdit::textChanged, m_rows,
            &QSortFilterProxyModel::setFilterFixedString);
    connect(m_refresh, &QPushButton::clicked, this, &TenantsPage::refreshRequested);
    connect(m_create, &QPushButton::clicked, this, [this] { openEditor(true); });
    connect(m_edit, &QPushButton::clicked, this, [this] { openEditor(false); });
    connect(m_table, &QTableView::doubleClicked, this, [this] { openEditor(false); });
    connect(m_suspend, &QPushButton::clicked, this, [this] { suspendSelected(true); });
    connect(m_resume, &QPushButton::clicked, this, [this] { suspendSelected(false); });
}

QString TenantsPage::selectedTenant() const
{
    const QModelIndexList rows =
            m_table->selectionModel()->selectedRows(TenantsModel::ExternalIdColumn);
    return rows.isEmpty() ? QString() : rows.first().data(KeyedTableModel::KeyRole).toString();
}

TenantDialog *TenantsPage::openEditor(bool newTenant)
{
    std::optional<api::TenantSummary> existing;
    if (!newTenant) {
        const int row = m_model->rowOf(selectedTenant());
        if (row < 0) {
            showError(tr("Select a tenant first."));
            return nullptr;
        }
        existing = m_model->tenant(row);
    }
    auto *dialog = new TenantDialog(existing ? &*existing : nullptr, this); // child
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        if (dialog->isNew()) {
            Q_EMIT createRequested(dialog->changes());
        } else {
            Q_EMIT updateRequested(dialog->externalIdEdit()->text(), dialog->changes());
        }
    });
    dialog->open();
    return dialog;
}

void TenantsPage::suspendSelected(bool suspended)
{
    const QString tenant = selectedTenant();
    if (tenant.isEmpty()) {
        showError(tr("Select a tenant first."));
        return;
    }
    Q_EMIT suspendRequested(tenant, suspended);
}

void TenantsPage::showDone(const QString &text)
{
    m_status->setText(text);
}

void TenantsPage::showError(const QString &text)
{
    m_status->setText(text);
}

void TenantsPage::setBusy(bool busy)
{
    for (QPushButton *button : { m_refresh, m_create, m_edit, m_suspend, m_resume }) {
        button->setEnabled(!busy);
    }
    if (busy) {
        m_status->setText(tr("Working…"));
    }
}

} // namespace rt::dashboard
