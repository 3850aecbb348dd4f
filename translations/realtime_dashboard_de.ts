<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>rt::dashboard::MainWindow</name>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="14"/>
        <source>qtrealtime dashboard</source>
        <translation>qtrealtime-Dashboard</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="17"/>
        <source>Cluster overview</source>
        <translation>Cluster-Übersicht</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="24"/>
        <source>Connect to a node to see its cluster: nodes and their CPU load, tenant placement and message flow.</source>
        <translation>Verbinden Sie sich mit einem Knoten, um seinen Cluster zu sehen: Knoten und ihre CPU-Last, die Platzierung der Mandanten und den Nachrichtenfluss.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="32"/>
        <source>Not connected</source>
        <translation>Nicht verbunden</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="35"/>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="36"/>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="37"/>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="38"/>
        <source>&amp;About</source>
        <translation>&amp;Über</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="49"/>
        <source>About qtrealtime dashboard</source>
        <translation>Über das qtrealtime-Dashboard</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="50"/>
        <source>Operator dashboard for qtrealtime clusters, version %1.</source>
        <translation>Betriebs-Dashboard für qtrealtime-Cluster, Version %1.</translation>
    </message>
</context>
</TS>
