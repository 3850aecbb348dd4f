#pragma once

#include <QByteArray>
#include <QDialog>
#include <QString>
#include <QWidget>

#include <chrono>
#include <optional>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTableView;
class QFrame;

namespace rt::dashboard {

class ConfigModel;

// One intended change of a configuration key: a compare-and-swap against the revision the
// operator saw (0: the key must not exist yet), optionally a temporary override that expires.
struct ConfigEdit
{
    QString key;
    QByteArray valueJson;
    qint64 expectedRevision = 0;
    std::optional<std::chrono::seconds> ttl; // set: a temporary override

    friend bool operator==(const ConfigEdit &, const ConfigEdit &) = default;
};

// Asks for a key's value (JSON, checked before it can be accepted) and whether it is a
// temporary override with an expiry. Lives on the GUI thread.
class ConfigEditDialog : public QDialog
{
    Q_OBJECT
public:
    // `key` empty: a new key (editable); otherwise that key's edit from `value` at `revision`.
    ConfigEditDialog(const QString &key, const QByteArray &value, qint64 revision, bool temporary,
                     QWidget *parent = nullptr);

    ConfigEdit edit() const;
    // Why the input cannot be sent, in words; empty when it can.
    QString problem() const;

    QLineEdit *keyEdit() const { return m_key; }
    QPlainTextEdit *valueEdit() const { return m_value; }
    QCheckBox *temporaryBox() const { return m_temporary; }
    QSpinBox *ttlBox() const { return m_ttl; }
    QPushButton *okButton() const { return m_ok; }

private:
    void validate();

    qint64 m_revision;
    QLineEdit *m_key; // child
    QPlainTextEdit *m_value; // child
    QCheckBox *m_temporary; // child
    QSpinBox *m_ttl; // child
    QLabel *m_problem; // child
    QPushButton *m_ok; // child
};

// The Configuration view: the cluster configuration (key, value, revision, temporary) with
// add, edit, temporary override and delete. It only states intents (writeRequested,
// deleteRequested); the application sends them and reports back: showConflict() puts the
// current value beside the operator's and offers to reapply the change on top of it.
// Lives on the GUI thread.
class ConfigPage : public QWidget
{
    Q_OBJECT
public:
    explicit ConfigPage(ConfigModel *model, QWidget *parent = nullptr);

    QTableView *table() const { return m_table; }
    QFrame *conflictBanner() const { return m_conflict; }
    QLabel *conflictText() const { return m_conflictText; }
    QPushButton *reapplyButton() const { return m_reapply; }
    QLabel *statusText() const { return m_status; }

    // The key of the selected row; empty when none.
    QString selectedKey() const;
    // Opens the edit dialog for the selected key (or a new one), without blocking.
    ConfigEditDialog *openEditor(bool newKey, bool temporary);

public Q_SLOTS: // NOLINT(readability-redundant-access-specifiers): moc reads the slots section
    // The cluster refused `mine`: the key is at `currentRevision` with `currentValue`.
    void showConflict(const rt::dashboard::ConfigEdit &mine, const QByteArray &currentValue,
                      qint64 currentRevision);
    void showWritten(const QString &key, qint64 revision);
    void showError(const QString &text);
    void setBusy(bool busy);

Q_SIGNALS:
    void writeRequested(const rt::dashboard::ConfigEdit &edit);
    void deleteRequested(const QString &key, qint64 expectedRevision);

private:
    void deleteSelected();
    void reapply();

    ConfigModel *m_model; // not owned
    QTableView *m_table; // child
    QPushButton *m_add; // child
    QPushButton *m_edit; // child
    QPushButton *m_override; // child
    QPushButton *m_delete; // child
    QFrame *m_conflict; // child
    QLabel *m_conflictText; // child
    QPushButton *m_reapply; // child
    QLabel *m_status; // child
    std::optional<ConfigEdit> m_rejected; // the edit a conflict refused, with the new revision
};

} // namespace rt::dashboard

Q_DECLARE_METATYPE(rt::dashboard::ConfigEdit)
