#pragma once

#include "dashboard/api/tenant_changes.h"

#include <QDialog>
#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace rt::api {
struct TenantSummary;
}

namespace rt::dashboard {

class TenantsModel;

// Create or edit one tenant: the fields of the tenant API an operator changes by hand. Only
// what differs from the tenant as shown is sent on edit. Lives on the GUI thread.
class TenantDialog : public QDialog
{
    Q_OBJECT
public:
    // `existing` null: a new tenant.
    explicit TenantDialog(const api::TenantSummary *existing, QWidget *parent = nullptr);

    TenantChanges changes() const;
    QString problem() const; // why it cannot be sent yet; empty when it can
    bool isNew() const { return m_new; }

    QLineEdit *externalIdEdit() const { return m_externalId; }
    QLineEdit *nameEdit() const { return m_name; }
    QLineEdit *secretEdit() const { return m_secret; }
    QSpinBox *maxUsersBox() const { return m_maxUsers; }
    QPushButton *okButton() const { return m_ok; }

private:
    void validate();

    bool m_new;
    QString m_originalName;
    qint64 m_original[4] = {};
    bool m_originalPrivateOnly = false;
    bool m_originalPresence = false;
    QLineEdit *m_externalId; // child
    QLineEdit *m_name; // child
    QLineEdit *m_secret; // child
    QSpinBox *m_maxUsers; // child
    QSpinBox *m_maxChannels; // child
    QSpinBox *m_maxEvents; // child
    QSpinBox *m_maxJoins; // child
    QCheckBox *m_privateOnly; // child
    QCheckBox *m_presence; // child
    QLabel *m_problem; // child
    QPushButton *m_ok; // child
};

// The Tenants view: the tenant API's list, with create, edit, suspend and resume. It states
// intents; the application calls the API and reports back (showDone, showError). Lives on the
// GUI thread.
class TenantsPage : public QWidget
{
    Q_OBJECT
public:
    explicit TenantsPage(TenantsModel *model, QWidget *parent = nullptr);

    QTableView *table() const { return m_table; }
    QLineEdit *filter() const { return m_filter; }
    QLabel *statusText() const { return m_status; }
    QString selectedTenant() const; // external id; empty when none
    TenantDialog *openEditor(bool newTenant);

    void showDone(const QString &text);
    void showError(const QString &text);
    void setBusy(bool busy);

Q_SIGNALS:
    void refreshRequested();
    void createRequested(const rt::dashboard::TenantChanges &tenant);
    void updateRequested(const QString &externalId, const rt::dashboard::TenantChanges &changes);
    void suspendRequested(const QString &externalId, bool suspended);

private:
    void suspendSelected(bool suspended);

    TenantsModel *m_model; // not owned
    QSortFilterProxyModel *m_rows; // child
    QTableView *m_table; // child
    QLineEdit *m_filter; // child
    QPushButton *m_refresh; // child
    QPushButton *m_create; // child
    QPushButton *m_edit; // child
    QPushButton *m_suspend; // child
    QPushButton *m_resume; // child
    QLabel *m_status; // child
};

} // namespace rt::dashboard
