<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr_FR">
<context>
    <name>rt::dashboard::MainWindow</name>
    <message>
        <source>qtrealtime dashboard</source>
        <translation type="vanished">Tableau de bord qtrealtime</translation>
    </message>
    <message>
        <source>Cluster overview</source>
        <translation type="vanished">Vue d’ensemble du cluster</translation>
    </message>
    <message>
        <source>Connect to a node to see its cluster: nodes and their CPU load, tenant placement and message flow.</source>
        <translation type="vanished">Connectez-vous à un nœud pour voir son cluster : les nœuds et leur charge CPU, le placement des locataires et le flux des messages.</translation>
    </message>
    <message>
        <source>Not connected</source>
        <translation type="vanished">Non connecté</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="vanished">&amp;Fichier</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="vanished">&amp;Quitter</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="vanished">&amp;Aide</translation>
    </message>
    <message>
        <source>&amp;About</source>
        <translation type="vanished">À &amp;propos</translation>
    </message>
    <message>
        <source>About qtrealtime dashboard</source>
        <translation type="vanished">À propos du tableau de bord qtrealtime</translation>
    </message>
    <message>
        <source>Operator dashboard for qtrealtime clusters, version %1.</source>
        <translation type="vanished">Tableau de bord d’exploitation des clusters qtrealtime, version %1.</translation>
    </message>
</context>
</TS>
