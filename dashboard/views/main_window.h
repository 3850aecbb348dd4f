#pragma once

#include <QMainWindow>

class QLabel;

namespace rt::dashboard {

// The dashboard's main window. For now it shows the connection state only; the node, placement,
// message-flow, configuration and tenant views arrive with the admin API. Lives on the GUI
// thread.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);

    QString connectionStateText() const;

private:
    void showAbout();

    QLabel *m_connectionState = nullptr; // child
};

} // namespace rt::dashboard
