#include "dashboard/views/config_page.h"

#include "dashboard/models/config_model.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

namespace rt::dashboard {

namespace {

// A value is any JSON text (object, array, string, number, ...): wrapped in an array so that
// scalars parse too.
QString jsonProblem(const QByteArray &text)
{
    QJsonParseError error{};
    QJsonDocument::fromJson(QByteArray("[" + text + "]"), &error);
    if (text.trimmed().isEmpty()) {
        return ConfigEditDialog::tr("The value is empty; enter JSON, e.g. {\"key\": 1}.");
    }
    if (error.error != QJsonParseError::NoError) {
        return ConfigEditDialog::tr("The value is not valid JSON: %1 (at character %2).")
                .arg(error.errorString())
                .arg(std::max(0, error.offset - 1));
    }
    return {};
}

} // namespace

ConfigEditDialog::ConfigEditDialog(const QString &key, const QByteArray &value, qint64 revision,
                                   bool temporary, QWidget *parent)
    : QDialog(parent),
      m_revision(revision),
      m_key(new QLineEdit(key, this)),
      m_value(new QPlainTextEdit(QString::fromUtf8(value), this)),
      m_temporary(new QCheckBox(tr("Temporary override (expires by itself)"), this)),
      m_ttl(new QSpinBox(this)),
      m_problem(new QLabel(this))
{
    setWindowTitle(key.isEmpty() ? tr("New configuration key") : tr("Edit %1").arg(key));
    m_key->setReadOnly(!key.isEmpty());
    m_key->setPlaceholderText(tr("e.g. region_mapping or tenant_limits.<tenant>"));
    m_temporary->setChecked(temporary);
    m_ttl->setRange(1, 7 * 24 * 3600);
    m_ttl->setValue(600);
    m_ttl->setSuffix(tr(" s"));
    m_problem->setWordWrap(true);
    m_problem->setForegroundRole(QPalette::BrightText);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel,
                                         this); // child
    m_ok = buttons->button(QDialogButtonBox::Ok);
    m_ok->setText(tr("Save"));

    auto *form = new QFormLayout; // owned by the dialog's layout
    form->addRow(tr("Key:"), m_key);
    form->addRow(tr("Value (JSON):"), m_value);
    form->addRow(QString(), m_temporary);
    form->addRow(tr("Expires after:"), m_ttl);
    auto *layout = new QVBoxLayout(this); // owned by the dialog
    layout->addLayout(form);
    layout->addWidget(m_problem);
    layout->addWidget(buttons);

    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_key, &QLineEdit::textChanged, this, &ConfigEditDialog::validate);
    connect(m_value, &QPlainTextEdit::textChanged, this, &ConfigEditDialog::validate);
    connect(m_temporary, &QCheckBox::toggled, this, &ConfigEditDialog::validate);
    validate();
}

ConfigEdit ConfigEditDialog::edit() const
{
    ConfigEdit edit;
    edit.key = m_key->text().trimmed();
    edit.valueJson = m_value->toPlainText().trimmed().toUtf8();
    edit.expectedRevision = m_revision;
    if (m_temporary->isChecked()) {
        edit.ttl = std::chrono::seconds(m_ttl->value());
    }
    return edit;
}

QString ConfigEditDialog::problem() const
{
    if (m_key->text().trimmed().isEmpty()) {
        return tr("Enter a key.");
    }
    return jsonProblem(m_value->toPlainText().trimmed().toUtf8());
}

void ConfigEditDialog::validate()
{
    const QString text = problem();
    m_problem->setText(text);
    m_problem->setVisible(!text.isEmpty());
    m_ok->setEnabled(text.isEmpty());
    m_ttl->setEnabled(m_temporary->isChecked());
}

ConfigPage::ConfigPage(ConfigModel *model, QWidget *parent)
    : QWidget(parent),
      m_model(model),
      m_table(new QTableView(this)),
      m_add(new QPushButton(tr("&Add…"), this)),
      m_edit(new QPushButton(tr("&Edit…"), this)),
      m_override(new QPushButton(tr("&Temporary override…"), this)),
      m_delete(new QPushButton(tr("&Delete"), this)),
      m_conflict(new QFrame(this)),
      m_conflictText(new QLabel(m_conflict)),
      m_reapply(new QPushButton(tr("&Reapply my change"), m_conflict)),
      m_status(new QLabel(this))
{
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(ConfigModel::ValueColumn,
                                                      QHeaderView::Stretch);

    m_conflict->setFrameShape(QFrame::StyledPanel);
    m_conflict->setAutoFillBackground(true);
    m_conflict->setBackgroundRole(QPalette::ToolTipBase);
    m_conflictText->setWordWrap(true);
    m_conflictText->setTextFormat(Qt::PlainText);
    auto *dismiss = new QPushButton(tr("&Keep the current value"), m_conflict);
    auto *conflictLayout = new QHBoxLayout(m_conflict); // owned by the banner
    conflictLayout->addWidget(m_conflictText, 1);
    conflictLayout->addWidget(m_reapply);
    conflictLayout->addWidget(dismiss);
    m_conflict->hide();

    auto *buttons = new QHBoxLayout; // owned by the page's layout
    buttons->addWidget(m_add);
    buttons->addWidget(m_edit);
    buttons->addWidget(m_override);
    buttons->addWidget(m_delete);
    buttons->addStretch();
    buttons->addWidget(m_status);
    auto *layout = new QVBoxLayout(this); // owned by this widget
    layout->addLayout(buttons);
    layout->addWidget(m_conflict);
    layout->addWidget(m_table);

    connect(m_add, &QPushButton::clicked, this, [this] { openEditor(true, false); });
    connect(m_edit, &QPushButton::clicked, this, [this] { openEditor(false, false); });
    connect(m_override, &QPushButton::clicked, this, [this] { openEditor(false, true); });
    connect(m_delete, &QPushButton::clicked, this, &ConfigPage::deleteSelected);
    connect(m_reapply, &QPushButton::clicked, this, &ConfigPage::reapply);
    connect(dismiss, &QPushButton::clicked, this, [this] {
        m_rejected.reset();
        m_conflict->hide();
    });
    connect(m_table, &QTableView::doubleClicked, this, [this] { openEditor(false, false); });
}

QString ConfigPage::selectedKey() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows(ConfigModel::KeyColumn);
    return rows.isEmpty() ? QString() : rows.first().data(KeyedTableModel::KeyRole).toString();
}

ConfigEditDialog *ConfigPage::openEditor(bool newKey, bool temporary)
{
    QString key;
    QByteArray value;
    qint64 revision = 0;
    if (!newKey) {
        key = selectedKey();
        const api::ConfigValue *entry = key.isEmpty() ? nullptr : m_model->entry(key);
        if (entry == nullptr) {
            showError(tr("Select a key first."));
            return nullptr;
        }
        value = entry->value;
        revision = entry->modRevision;
    } else {
        value = QByteArrayLiteral("{}");
    }
    auto *dialog = new ConfigEditDialog(key, value, revision, temporary, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        m_conflict->hide();
        m_rejected.reset();
        Q_EMIT writeRequested(dialog->edit());
    });
    dialog->open(); // window-modal, no nested event loop
    return dialog;
}

void ConfigPage::deleteSelected()
{
    const QString key = selectedKey();
    const api::ConfigValue *entry = key.isEmpty() ? nullptr : m_model->entry(key);
    if (entry == nullptr) {
        showError(tr("Select a key first."));
        return;
    }
    Q_EMIT deleteRequested(key, entry->modRevision);
}

void ConfigPage::showConflict(const ConfigEdit &mine, const QByteArray &currentValue,
                              qint64 currentRevision)
{
    m_rejected = mine;
    m_rejected->expectedRevision = currentRevision;
    m_conflictText->setText(
            tr("Someone else changed %1 first (now at revision %2). Current value: %3\n"
               "Your value: %4")
                    .arg(mine.key)
                    .arg(currentRevision)
                    .arg(currentValue.isEmpty() ? tr("(deleted)") : QString::fromUtf8(currentValue),
                         QString::fromUtf8(mine.valueJson)));
    m_conflict->show();
    m_status->setText(tr("Conflict: nothing was overwritten."));
}

void ConfigPage::showWritten(const QString &key, qint64 revision)
{
    m_status->setText(tr("Saved %1 (revision %2).").arg(key).arg(revision));
}

void ConfigPage::showError(const QString &text)
{
    m_status->setText(text);
}

void ConfigPage::setBusy(bool busy)
{
    for (QPushButton *button : { m_add, m_edit, m_override, m_delete, m_reapply }) {
        button->setEnabled(!busy);
    }
    if (busy) {
        m_status->setText(tr("Saving…"));
    }
}

void ConfigPage::reapply()
{
    if (!m_rejected) {
        return;
    }
    const ConfigEdit again = *m_rejected;
    m_rejected.reset();
    m_conflict->hide();
    Q_EMIT writeRequested(again);
}

} // namespace rt::dashboard
