#include "dashboard/views/main_window.h"

#include <QCoreApplication>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QVBoxLayout>

namespace rt::dashboard {

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent)
{
    setWindowTitle(tr("qtrealtime dashboard"));
    auto *central = new QWidget(this); // NOLINT: owned by the window
    auto *layout = new QVBoxLayout(central); // NOLINT: owned by central
    auto *heading = new QLabel(tr("Cluster overview"), central); // NOLINT
    QFont headingFont = heading->font();
    headingFont.setPointSizeF(headingFont.pointSizeF() * 1.4);
    headingFont.setBold(true);
    heading->setFont(headingFont);
    layout->addWidget(heading);
    auto *placeholder =
            new QLabel(tr("Connect to a node to see its cluster: nodes and their CPU load, tenant "
                          "placement and message flow."),
                       central); // NOLINT
    placeholder->setWordWrap(true);
    layout->addWidget(placeholder);
    layout->addStretch();
    setCentralWidget(central);

    m_connectionState = new QLabel(tr("Not connected"), this); // NOLINT
    statusBar()->addPermanentWidget(m_connectionState);

    QMenu *fileMenu = menuBar()->addMenu(tr("&File"));
    fileMenu->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    QMenu *helpMenu = menuBar()->addMenu(tr("&Help"));
    helpMenu->addAction(tr("&About"), this, &MainWindow::showAbout);
    resize(900, 600);
}

QString MainWindow::connectionStateText() const
{
    return m_connectionState->text();
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About qtrealtime dashboard"),
                       tr("Operator dashboard for qtrealtime clusters, version %1.")
                               .arg(QCoreApplication::applicationVersion()));
}

} // namespace rt::dashboard
