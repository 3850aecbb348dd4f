#include "dashboard/views/main_window.h"

#include "dashboard/models/snapshot_models.h"
#include "dashboard/views/config_page.h"
#include "dashboard/views/flow_page.h"
#include "dashboard/views/nodes_page.h"
#include "dashboard/views/placement_page.h"
#include "dashboard/views/tenants_page.h"

#include <QActionGroup>
#include <QCoreApplication>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace rt::dashboard {

ConnectDialog::ConnectDialog(const QString &url, const QByteArray &token, const NodeTrust &trust,
                             QWidget *parent)
    : QDialog(parent),
      m_url(new QLineEdit(url, this)),
      m_token(new QLineEdit(this)),
      m_caFile(new QLineEdit(trust.caFile, this)),
      m_failoverHosts(new QLineEdit(trust.failoverHosts.join(QLatin1String(", ")), this))
{
    setWindowTitle(tr("Connect to a cluster"));
    m_url->setPlaceholderText(tr("http://node-a:4000"));
    m_token->setText(QString::fromUtf8(token));
    m_token->setEchoMode(QLineEdit::Password);
    m_token->setPlaceholderText(tr("a JWT signed with API_JWT_SECRET, role service_role"));
    m_caFile->setPlaceholderText(tr("the system's certificate authorities"));
    m_caFile->setToolTip(tr("PEM file of the certificate authorities that sign the nodes' "
                            "certificates (https). When set, only these are trusted."));
    auto *browse = new QToolButton(this); // child
    browse->setText(tr("Browse…"));
    connect(browse, &QToolButton::clicked, this, &ConnectDialog::chooseCaFile);
    auto *caRow = new QHBoxLayout; // owned by the form
    caRow->addWidget(m_caFile);
    caRow->addWidget(browse);
    m_failoverHosts->setPlaceholderText(tr("the cluster's members under the same scheme"));
    m_failoverHosts->setToolTip(tr("Hosts the dashboard may switch to when the node fails, "
                                   "separated by commas: names, *.domain, addresses or subnets "
                                   "such as 10.0.0.0/8. The token is only ever sent to them."));
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel,
                                         this); // child
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Connect"));
    auto *form = new QFormLayout; // owned by the layout
    form->addRow(tr("Node URL:"), m_url);
    form->addRow(tr("Operator token:"), m_token);
    form->addRow(tr("CA file:"), caRow);
    form->addRow(tr("Failover hosts:"), m_failoverHosts);
    auto *layout = new QVBoxLayout(this); // owned by the dialog
    layout->addLayout(form);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    resize(520, sizeHint().height());
}

QString ConnectDialog::url() const
{
    return m_url->text().trimmed();
}

QByteArray ConnectDialog::token() const
{
    return m_token->text().trimmed().toUtf8();
}

NodeTrust ConnectDialog::trust() const
{
    return { m_caFile->text().trimmed(),
             FailoverAllowlist::splitPatterns(m_failoverHosts->text()) };
}

void ConnectDialog::chooseCaFile()
{
    // Non-blocking: the dialog opens window-modal and answers through fileSelected().
    auto *chooser = new QFileDialog(this, tr("Certificate authorities (PEM)")); // child
    chooser->setAttribute(Qt::WA_DeleteOnClose);
    chooser->setFileMode(QFileDialog::ExistingFile);
    chooser->setNameFilters({ tr("PEM certificates (*.pem *.crt *.cer)"), tr("All files (*)") });
    connect(chooser, &QFileDialog::fileSelected, m_caFile, &QLineEdit::setText);
    chooser->open();
}

MainWindow::MainWindow(SnapshotModels *models, QWidget *parent) : QMainWindow(parent)
{
    setWindowTitle(tr("qtrealtime dashboard"));
    m_tabs = new QTabWidget(this); // the central widget
    if (models != nullptr) {
        m_nodesPage = new NodesPage(models->nodes(), m_tabs); // owned by the tabs
        m_placementPage = new PlacementPage(models->placement(), models->nodes(), m_tabs);
        m_flowPage = new FlowPage(models, m_tabs);
        m_configPage = new ConfigPage(models->config(), m_tabs);
        m_tenantsPage = new TenantsPage(models->tenants(), m_tabs);
        m_tabs->addTab(m_nodesPage, tr("&Nodes"));
        m_tabs->addTab(m_placementPage, tr("&Placement"));
        m_tabs->addTab(m_flowPage, tr("&Message flow"));
        m_tabs->addTab(m_configPage, tr("&Configuration"));
        m_tabs->addTab(m_tenantsPage, tr("&Tenants"));
    } else {
        auto *placeholder = new QLabel(tr("Connect to a node to see its cluster: nodes and their "
                                          "CPU load, tenant placement and message flow."),
                                       m_tabs); // owned by the tabs
        placeholder->setWordWrap(true);
        placeholder->setAlignment(Qt::AlignCenter);
        m_tabs->addTab(placeholder, tr("Cluster overview"));
    }
    setCentralWidget(m_tabs);

    m_connectionState = new QLabel(tr("Not connected"), this); // status bar child
    m_snapshotTime = new QLabel(this); // status bar child
    m_busy = new QProgressBar(this); // status bar child
    m_busy->setRange(0, 0); // an activity indicator: calls in flight have no known length
    m_busy->setMaximumWidth(120);
    m_busy->setTextVisible(false);
    m_busy->hide();
    statusBar()->addWidget(m_snapshotTime, 1);
    statusBar()->addPermanentWidget(m_busy);
    statusBar()->addPermanentWidget(m_connectionState);

    QMenu *fileMenu = menuBar()->addMenu(tr("&File"));
    fileMenu->addAction(tr("&Connect…"), QKeySequence::Open, this,
                        [this] { openConnectDialog(m_lastUrl, m_lastToken, m_lastTrust); });
    fileMenu->addAction(tr("&Disconnect"), this, &MainWindow::disconnectRequested);
    fileMenu->addSeparator();
    fileMenu->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu *viewMenu = menuBar()->addMenu(tr("&View"));
    m_languageMenu = viewMenu->addMenu(tr("&Language"));
    auto *languages = new QActionGroup(this); // child
    const QList<std::pair<QString, QString>> choices{
        { QString(), tr("System language") },
        { QStringLiteral("en"), QStringLiteral("English") }, // names in their own language
        { QStringLiteral("de"), QStringLiteral("Deutsch") },
        { QStringLiteral("fr"), QStringLiteral("Français") },
    };
    for (const auto &[locale, name] : choices) {
        QAction *action = m_languageMenu->addAction(name);
        action->setCheckable(true);
        action->setData(locale);
        languages->addAction(action);
        connect(action, &QAction::triggered, this, [this, locale = locale] {
            Q_EMIT languageRequested(locale);
            statusBar()->showMessage(tr("The language changes at the next start."), 8000);
        });
    }
    setCurrentLanguage(QString());

    QMenu *helpMenu = menuBar()->addMenu(tr("&Help"));
    helpMenu->addAction(tr("&About"), this, &MainWindow::showAbout);
    resize(1200, 800);
}

QString MainWindow::connectionStateText() const
{
    return m_connectionState->text();
}

QStringList MainWindow::languageChoices() const
{
    QStringList names;
    for (const QAction *action : m_languageMenu->actions()) {
        names.append(action->data().toString());
    }
    return names;
}

ConnectDialog *MainWindow::openConnectDialog(const QString &url, const QByteArray &token,
                                             const NodeTrust &trust)
{
    auto *dialog = new ConnectDialog(url, token, trust, this); // child
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        m_lastUrl = dialog->url();
        m_lastToken = dialog->token();
        m_lastTrust = dialog->trust();
        Q_EMIT connectRequested(m_lastUrl, m_lastToken, m_lastTrust);
    });
    dialog->open();
    return dialog;
}

void MainWindow::setConnectionState(const QString &text, bool healthy)
{
    m_connectionState->setText(text);
    // Anything but a running connection stands out: the picture may be old.
    m_connectionState->setForegroundRole(healthy ? QPalette::WindowText : QPalette::Link);
    QFont font = m_connectionState->font();
    font.setBold(!healthy);
    m_connectionState->setFont(font);
}

void MainWindow::setPendingRequests(int pending)
{
    m_busy->setVisible(pending > 0);
    m_busy->setToolTip(tr("%n call(s) in flight", nullptr, pending));
}

void MainWindow::setSnapshotTime(qint64 takenAtMs, const QString &answeredBy)
{
    m_snapshotTime->setText(
            tr("Cluster as seen by %1 at %2")
                    .arg(answeredBy,
                         QLocale().toString(QDateTime::fromMSecsSinceEpoch(takenAtMs).time(),
                                            QLocale::LongFormat)));
}

void MainWindow::showProblem(const QString &text)
{
    statusBar()->showMessage(text, 15000);
}

void MainWindow::setCurrentLanguage(const QString &language)
{
    for (QAction *action : m_languageMenu->actions()) {
        action->setChecked(action->data().toString() == language);
    }
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About qtrealtime dashboard"),
                       tr("Operator dashboard for qtrealtime clusters, version %1.")
                               .arg(QCoreApplication::applicationVersion()));
}

} // namespace rt::dashboard
