<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr_FR">
<context>
    <name>rt::dashboard::MainWindow</name>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="14"/>
        <source>qtrealtime dashboard</source>
        <translation>Tableau de bord qtrealtime</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="17"/>
        <source>Cluster overview</source>
        <translation>Vue d’ensemble du cluster</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="24"/>
        <source>Connect to a node to see its cluster: nodes and their CPU load, tenant placement and message flow.</source>
        <translation>Connectez-vous à un nœud pour voir son cluster : les nœuds et leur charge CPU, le placement des locataires et le flux des messages.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="32"/>
        <source>Not connected</source>
        <translation>Non connecté</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="35"/>
        <source>&amp;File</source>
        <translation>&amp;Fichier</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="36"/>
        <source>&amp;Quit</source>
        <translation>&amp;Quitter</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="37"/>
        <source>&amp;Help</source>
        <translation>&amp;Aide</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="38"/>
        <source>&amp;About</source>
        <translation>À &amp;propos</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="49"/>
        <source>About qtrealtime dashboard</source>
        <translation>À propos du tableau de bord qtrealtime</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="50"/>
        <source>Operator dashboard for qtrealtime clusters, version %1.</source>
        <translation>Tableau de bord d’exploitation des clusters qtrealtime, version %1.</translation>
    </message>
</context>
</TS>
