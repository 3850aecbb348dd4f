<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>rt::dashboard::MainWindow</name>
    <message>
        <source>qtrealtime dashboard</source>
        <translation type="vanished">qtrealtime-Dashboard</translation>
    </message>
    <message>
        <source>Cluster overview</source>
        <translation type="vanished">Cluster-Übersicht</translation>
    </message>
    <message>
        <source>Connect to a node to see its cluster: nodes and their CPU load, tenant placement and message flow.</source>
        <translation type="vanished">Verbinden Sie sich mit einem Knoten, um seinen Cluster zu sehen: Knoten und ihre CPU-Last, die Platzierung der Mandanten und den Nachrichtenfluss.</translation>
    </message>
    <message>
        <source>Not connected</source>
        <translation type="vanished">Nicht verbunden</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="vanished">&amp;Datei</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="vanished">&amp;Beenden</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="vanished">&amp;Hilfe</translation>
    </message>
    <message>
        <source>&amp;About</source>
        <translation type="vanished">&amp;Über</translation>
    </message>
    <message>
        <source>About qtrealtime dashboard</source>
        <translation type="vanished">Über das qtrealtime-Dashboard</translation>
    </message>
    <message>
        <source>Operator dashboard for qtrealtime clusters, version %1.</source>
        <translation type="vanished">Betriebs-Dashboard für qtrealtime-Cluster, Version %1.</translation>
    </message>
</context>
</TS>
