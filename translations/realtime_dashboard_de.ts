<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>AdminResponses</name>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="181"/>
        <source>The server refused the operator token (%1). The token must be a JWT signed with the cluster&apos;s API_JWT_SECRET.</source>
        <translation>Der Server hat das Operator-Token abgelehnt (%1). Das Token muss ein mit dem API_JWT_SECRET des Clusters signiertes JWT sein.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="188"/>
        <source>The server is unavailable (%1).</source>
        <translation>Der Server ist nicht verfügbar (%1).</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="190"/>
        <source>The server answered %1.</source>
        <translation>Der Server antwortete mit %1.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="192"/>
        <source>The server answered %1: %2</source>
        <translation>Der Server antwortete mit %1: %2</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="203"/>
        <source>The server did not answer in time.</source>
        <translation>Der Server hat nicht rechtzeitig geantwortet.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="206"/>
        <source>The request was canceled.</source>
        <translation>Die Anfrage wurde abgebrochen.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="209"/>
        <source>The node could not be verified (%1). A cluster with a CA of its own needs that CA&apos;s certificate as the CA file.</source>
        <translation>Der Knoten konnte nicht verifiziert werden (%1). Ein Cluster mit eigener CA braucht das Zertifikat dieser CA als CA-Datei.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="214"/>
        <source>The server could not be reached.</source>
        <translation>Der Server ist nicht erreichbar.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="215"/>
        <source>The server could not be reached: %1</source>
        <translation>Der Server ist nicht erreichbar: %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="227"/>
        <source>The server&apos;s answer could not be read: %1</source>
        <translation>Die Antwort des Servers konnte nicht gelesen werden: %1</translation>
    </message>
</context>
<context>
    <name>ConnectionState</name>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="12"/>
        <source>Not connected</source>
        <translation>Nicht verbunden</translation>
    </message>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="14"/>
        <source>Connecting to %1…</source>
        <translation>Verbindung zu %1 wird hergestellt…</translation>
    </message>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="16"/>
        <source>Connected to %1</source>
        <translation>Verbunden mit %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="17"/>
        <source>Connected to %1 (%2)</source>
        <translation>Verbunden mit %1 (%2)</translation>
    </message>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="20"/>
        <source>Reconnecting: trying %1 in %2 s (attempt %3)…</source>
        <translation>Verbindung wird wiederhergestellt: %1 in %2 s (Versuch %3)…</translation>
    </message>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="22"/>
        <source>Connection lost (%4) — trying %1 in %2 s (attempt %3)…</source>
        <translation>Verbindung verloren (%4) – nächster Versuch: %1 in %2 s (Versuch %3)…</translation>
    </message>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="26"/>
        <source>Not connected: %1</source>
        <translation>Nicht verbunden: %1</translation>
    </message>
</context>
<context>
    <name>FailoverAllowlist</name>
    <message>
        <location filename="../dashboard/api/failover_allowlist.cpp" line="69"/>
        <source>&quot;%1&quot; is not a host name, *.domain, IP address or subnet (a failover host has no scheme and no port).</source>
        <translation>„%1“ ist kein Hostname, kein *.domain, keine IP-Adresse und kein Subnetz (ein Ausweich-Host hat weder Schema noch Port).</translation>
    </message>
</context>
<context>
    <name>LiveFeedProtocol</name>
    <message>
        <location filename="../dashboard/api/live_feed_protocol.cpp" line="76"/>
        <source>The live feed sent a frame that is not a Phoenix message: %1</source>
        <translation>Der Live-Feed hat einen Frame gesendet, der keine Phoenix-Nachricht ist: %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_protocol.cpp" line="104"/>
        <source>The server refused to send the live feed (status &quot;%1&quot;).</source>
        <translation>Der Server verweigert den Live-Feed (Status „%1“).</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_protocol.cpp" line="106"/>
        <source>The server refused to send the live feed: %1</source>
        <translation>Der Server verweigert den Live-Feed: %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_protocol.cpp" line="114"/>
        <source>A snapshot from the live feed could not be read: %1</source>
        <translation>Ein Snapshot aus dem Live-Feed konnte nicht gelesen werden: %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_protocol.cpp" line="125"/>
        <source>The server closed the live feed&apos;s channel (%1).</source>
        <translation>Der Server hat den Kanal des Live-Feeds geschlossen (%1).</translation>
    </message>
</context>
<context>
    <name>NodeTls</name>
    <message>
        <location filename="../dashboard/api/node_tls.cpp" line="26"/>
        <source>Cannot read the CA file %1: %2</source>
        <translation>Die CA-Datei %1 kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <location filename="../dashboard/api/node_tls.cpp" line="29"/>
        <source>The CA file %1 is larger than 4 MiB.</source>
        <translation>Die CA-Datei %1 ist größer als 4 MiB.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/node_tls.cpp" line="34"/>
        <source>The CA file %1 holds no PEM certificate.</source>
        <translation>Die CA-Datei %1 enthält kein PEM-Zertifikat.</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../dashboard/app/main.cpp" line="40"/>
        <source>Operator dashboard for qtrealtime clusters.</source>
        <translation>Betriebs-Dashboard für qtrealtime-Cluster.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="45"/>
        <source>Connect to the node at &lt;url&gt; at start.</source>
        <translation>Beim Start mit dem Knoten unter &lt;url&gt; verbinden.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="49"/>
        <source>The operator token (a JWT signed with API_JWT_SECRET, role service_role).</source>
        <translation>Das Operator-Token (ein mit API_JWT_SECRET signiertes JWT, Rolle service_role).</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="55"/>
        <source>Wait for the first snapshot and a few live updates, write one PNG per view into &lt;dir&gt;, exit.</source>
        <translation>Auf den ersten Snapshot und einige Live-Aktualisierungen warten, je Ansicht ein PNG in &lt;dir&gt; schreiben, beenden.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="61"/>
        <source>Interface language (de, fr, en); default: the system&apos;s or the one chosen in the app.</source>
        <translation>Sprache der Oberfläche (de, fr, en); Standard: die des Systems oder die in der Anwendung gewählte.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="67"/>
        <source>Trust only the certificate authorities in &lt;pem&gt; for https nodes (default: the system&apos;s).</source>
        <translation>Für https-Knoten nur den Zertifizierungsstellen in &lt;pem&gt; vertrauen (Standard: denen des Systems).</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="73"/>
        <source>Fail over only to these hosts (comma-separated names, *.domain, addresses or subnets; default: the cluster&apos;s members under the same scheme).</source>
        <translation>Nur zu diesen Hosts wechseln (durch Kommas getrennte Namen, *.domain, Adressen oder Subnetze; Standard: die Mitglieder des Clusters mit demselben Schema).</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="131"/>
        <source>--screenshot needs --connect and --token.
</source>
        <translation>--screenshot erfordert --connect und --token.
</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::AdminClient</name>
    <message>
        <location filename="../dashboard/api/admin_client.cpp" line="78"/>
        <source>Not connected to a node.</source>
        <translation>Nicht mit einem Knoten verbunden.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_client.cpp" line="147"/>
        <location filename="../dashboard/api/admin_client.cpp" line="169"/>
        <source>&quot;%1&quot; is not a configuration key.</source>
        <translation>„%1“ ist kein Konfigurationsschlüssel.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_client.cpp" line="150"/>
        <source>A temporary value needs an expiry of at least one second.</source>
        <translation>Ein temporärer Wert braucht eine Ablaufzeit von mindestens einer Sekunde.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_client.cpp" line="155"/>
        <source>The value of %1 is not valid JSON: %2</source>
        <translation>Der Wert von %1 ist kein gültiges JSON: %2</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_client.cpp" line="187"/>
        <location filename="../dashboard/api/admin_client.cpp" line="203"/>
        <location filename="../dashboard/api/admin_client.cpp" line="226"/>
        <source>&quot;%1&quot; is not a tenant id.</source>
        <translation>„%1“ ist keine Mandanten-ID.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_client.cpp" line="195"/>
        <source>A new tenant needs an external id.</source>
        <translation>Ein neuer Mandant braucht eine externe ID.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::ConfigEditDialog</name>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="34"/>
        <source>The value is empty; enter JSON, e.g. {&quot;key&quot;: 1}.</source>
        <translation>Der Wert ist leer; geben Sie JSON ein, z. B. {&quot;key&quot;: 1}.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="37"/>
        <source>The value is not valid JSON: %1 (at character %2).</source>
        <translation>Der Wert ist kein gültiges JSON: %1 (bei Zeichen %2).</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="52"/>
        <source>Temporary override (expires by itself)</source>
        <translation>Temporäre Überschreibung (läuft von selbst ab)</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="56"/>
        <source>New configuration key</source>
        <translation>Neuer Konfigurationsschlüssel</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="56"/>
        <source>Edit %1</source>
        <translation>%1 bearbeiten</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="58"/>
        <source>e.g. region_mapping or tenant_limits.&lt;tenant&gt;</source>
        <translation>z. B. region_mapping oder tenant_limits.&lt;Mandant&gt;</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="62"/>
        <source> s</source>
        <translation> s</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="68"/>
        <source>Save</source>
        <translation>Speichern</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="71"/>
        <source>Key:</source>
        <translation>Schlüssel:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="72"/>
        <source>Value (JSON):</source>
        <translation>Wert (JSON):</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="74"/>
        <source>Expires after:</source>
        <translation>Läuft ab nach:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="103"/>
        <source>Enter a key.</source>
        <translation>Geben Sie einen Schlüssel ein.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::ConfigModel</name>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="53"/>
        <source>Yes</source>
        <translation>Ja</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="49"/>
        <source>No</source>
        <translation>Nein</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="52"/>
        <source>Until %1</source>
        <translation>Bis %1</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="60"/>
        <source>A temporary override: its lease ends at %1</source>
        <translation>Eine temporäre Überschreibung: Ihr Lease endet am %1</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="62"/>
        <source>A temporary override: it expires with its lease</source>
        <translation>Eine temporäre Überschreibung: Sie läuft mit ihrem Lease ab</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="103"/>
        <source>Key</source>
        <translation>Schlüssel</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="105"/>
        <source>Value</source>
        <translation>Wert</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="107"/>
        <source>Revision</source>
        <translation>Revision</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="109"/>
        <source>Temporary</source>
        <translation>Temporär</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::ConfigPage</name>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="121"/>
        <source>&amp;Add…</source>
        <translation>Hin&amp;zufügen…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="122"/>
        <source>&amp;Edit…</source>
        <translation>&amp;Bearbeiten…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="123"/>
        <source>&amp;Temporary override…</source>
        <translation>&amp;Temporär überschreiben…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="124"/>
        <source>&amp;Delete</source>
        <translation>&amp;Löschen</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="127"/>
        <source>&amp;Reapply my change</source>
        <translation>Meine Änderung &amp;erneut anwenden</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="142"/>
        <source>&amp;Keep the current value</source>
        <translation>Aktuellen &amp;Wert behalten</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="188"/>
        <location filename="../dashboard/views/config_page.cpp" line="212"/>
        <source>Select a key first.</source>
        <translation>Wählen Sie zuerst einen Schlüssel aus.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="224"/>
        <source>Someone else changed %1 first (now at revision %2). Current value: %3
Your value: %4</source>
        <translation>Jemand anderes hat %1 zuerst geändert (jetzt Revision %2). Aktueller Wert: %3
Ihr Wert: %4</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="228"/>
        <source>(deleted)</source>
        <translation>(gelöscht)</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="231"/>
        <source>Conflict: nothing was overwritten.</source>
        <translation>Konflikt: Es wurde nichts überschrieben.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="236"/>
        <source>Saved %1 (revision %2).</source>
        <translation>%1 gespeichert (Revision %2).</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="250"/>
        <source>Saving…</source>
        <translation>Speichern…</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::ConnectDialog</name>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="38"/>
        <source>Connect to a cluster</source>
        <translation>Mit einem Cluster verbinden</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="39"/>
        <source>http://node-a:4000</source>
        <translation>http://node-a:4000</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="42"/>
        <source>a JWT signed with API_JWT_SECRET, role service_role</source>
        <translation>ein mit API_JWT_SECRET signiertes JWT, Rolle service_role</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="43"/>
        <source>the system&apos;s certificate authorities</source>
        <translation>die Zertifizierungsstellen des Systems</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="44"/>
        <source>PEM file of the certificate authorities that sign the nodes&apos; certificates (https). When set, only these are trusted.</source>
        <translation>PEM-Datei der Zertifizierungsstellen, die die Zertifikate der Knoten signieren (https). Ist sie gesetzt, wird nur diesen vertraut.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="47"/>
        <source>Browse…</source>
        <translation>Durchsuchen…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="52"/>
        <source>the cluster&apos;s members under the same scheme</source>
        <translation>die Mitglieder des Clusters mit demselben Schema</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="53"/>
        <source>Hosts the dashboard may switch to when the node fails, separated by commas: names, *.domain, addresses or subnets such as 10.0.0.0/8. The token is only ever sent to them.</source>
        <translation>Hosts, zu denen das Dashboard wechseln darf, wenn der Knoten ausfällt, durch Kommas getrennt: Namen, *.domain, Adressen oder Subnetze wie 10.0.0.0/8. Das Token wird nur an sie gesendet.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="58"/>
        <source>Connect</source>
        <translation>Verbinden</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="60"/>
        <source>Node URL:</source>
        <translation>Knoten-URL:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="61"/>
        <source>Operator token:</source>
        <translation>Operator-Token:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="62"/>
        <source>CA file:</source>
        <translation>CA-Datei:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="63"/>
        <source>Failover hosts:</source>
        <translation>Ausweich-Hosts:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="90"/>
        <source>Certificate authorities (PEM)</source>
        <translation>Zertifizierungsstellen (PEM)</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="93"/>
        <source>PEM certificates (*.pem *.crt *.cer)</source>
        <translation>PEM-Zertifikate (*.pem *.crt *.cer)</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="93"/>
        <source>All files (*)</source>
        <translation>Alle Dateien (*)</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::ConnectionManager</name>
    <message>
        <location filename="../dashboard/api/connection_manager.cpp" line="50"/>
        <source>&quot;%1&quot; is not the URL of a node (e.g. http://host:4000).</source>
        <translation>„%1“ ist nicht die URL eines Knotens (z. B. http://host:4000).</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::DashboardApplication</name>
    <message numerus="yes">
        <location filename="../dashboard/app/dashboard_application.cpp" line="135"/>
        <source>%n tenant(s).</source>
        <translation>
            <numerusform>%n Mandant.</numerusform>
            <numerusform>%n Mandanten.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="169"/>
        <source>Deleted %1.</source>
        <translation>%1 gelöscht.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="171"/>
        <source>%1 changed meanwhile (revision %2): nothing was deleted.</source>
        <translation>%1 wurde inzwischen geändert (Revision %2): Es wurde nichts gelöscht.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="187"/>
        <source>Created %1.</source>
        <translation>%1 angelegt.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="201"/>
        <source>Saved %1.</source>
        <translation>%1 gespeichert.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="214"/>
        <source>Suspended %1: its clients are disconnected.</source>
        <translation>%1 gesperrt: Seine Clients wurden getrennt.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="215"/>
        <source>Resumed %1.</source>
        <translation>%1 reaktiviert.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="242"/>
        <source>No full picture within %1 s (%2 snapshot(s) received).</source>
        <translation>Kein vollständiges Bild innerhalb von %1 s (%2 Snapshot(s) empfangen).</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="257"/>
        <source>Cannot create %1.</source>
        <translation>%1 kann nicht angelegt werden.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="266"/>
        <location filename="../dashboard/app/dashboard_application.cpp" line="280"/>
        <source>Cannot write %1.</source>
        <translation>%1 kann nicht geschrieben werden.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::FlowGraph</name>
    <message>
        <location filename="../dashboard/widgets/flow_graph.cpp" line="16"/>
        <source>Message flow between nodes</source>
        <translation>Nachrichtenfluss zwischen den Knoten</translation>
    </message>
    <message>
        <location filename="../dashboard/widgets/flow_graph.cpp" line="92"/>
        <source>No nodes</source>
        <translation>Keine Knoten</translation>
    </message>
    <message>
        <location filename="../dashboard/widgets/flow_graph.cpp" line="128"/>
        <source>%1/s</source>
        <translation>%1/s</translation>
    </message>
    <message>
        <location filename="../dashboard/widgets/flow_graph.cpp" line="134"/>
        <source>The busiest %1 of %2 links</source>
        <translation>Die %1 verkehrsreichsten von %2 Verbindungen</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::FlowPage</name>
    <message>
        <location filename="../dashboard/views/flow_page.cpp" line="44"/>
        <source>Busiest tenants</source>
        <translation>Aktivste Mandanten</translation>
    </message>
    <message>
        <location filename="../dashboard/views/flow_page.cpp" line="44"/>
        <source>messages/s</source>
        <translation>Nachrichten/s</translation>
    </message>
    <message>
        <location filename="../dashboard/views/flow_page.cpp" line="56"/>
        <source>Search all tenants</source>
        <translation>Alle Mandanten durchsuchen</translation>
    </message>
    <message>
        <location filename="../dashboard/views/flow_page.cpp" line="99"/>
        <source>The busiest %1 of %2 tenant flows; search to see any tenant.</source>
        <translation>Die %1 verkehrsreichsten von %2 Mandanten-Flüssen; suchen Sie, um jeden Mandanten zu sehen.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::LinkFlowModel</name>
    <message>
        <location filename="../dashboard/models/link_flow_model.cpp" line="81"/>
        <source>From</source>
        <translation>Von</translation>
    </message>
    <message>
        <location filename="../dashboard/models/link_flow_model.cpp" line="83"/>
        <source>To</source>
        <translation>Nach</translation>
    </message>
    <message>
        <location filename="../dashboard/models/link_flow_model.cpp" line="85"/>
        <source>Messages/s</source>
        <translation>Nachrichten/s</translation>
    </message>
    <message>
        <location filename="../dashboard/models/link_flow_model.cpp" line="87"/>
        <source>Bytes/s</source>
        <translation>Bytes/s</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::LiveFeedConnection</name>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="119"/>
        <source>The node closed the live feed (code %1).</source>
        <translation>Der Knoten hat den Live-Feed geschlossen (Code %1).</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="120"/>
        <source>The node closed the live feed (code %1): %2</source>
        <translation>Der Knoten hat den Live-Feed geschlossen (Code %1): %2</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="131"/>
        <source>The live feed failed: %1</source>
        <translation>Der Live-Feed ist ausgefallen: %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="132"/>
        <source>The live feed could not be opened: %1</source>
        <translation>Der Live-Feed konnte nicht geöffnet werden: %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="138"/>
        <source>The node did not answer the last heartbeat within %1 s.</source>
        <translation>Der Knoten hat den letzten Heartbeat nicht innerhalb von %1 s beantwortet.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="148"/>
        <source>The node sent nothing for %1 s.</source>
        <translation>Der Knoten hat %1 s lang nichts gesendet.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="150"/>
        <source>The node did not accept the live feed&apos;s connection within %1 s.</source>
        <translation>Der Knoten hat die Verbindung des Live-Feeds nicht innerhalb von %1 s angenommen.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::MainWindow</name>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="100"/>
        <source>qtrealtime dashboard</source>
        <translation>qtrealtime-Dashboard</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="119"/>
        <source>Cluster overview</source>
        <translation>Cluster-Übersicht</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="114"/>
        <source>Connect to a node to see its cluster: nodes and their CPU load, tenant placement and message flow.</source>
        <translation>Verbinden Sie sich mit einem Knoten, um seinen Cluster zu sehen: Knoten und ihre CPU-Last, die Platzierung der Mandanten und den Nachrichtenfluss.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="108"/>
        <source>&amp;Nodes</source>
        <translation>&amp;Knoten</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="109"/>
        <source>&amp;Placement</source>
        <translation>&amp;Platzierung</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="110"/>
        <source>&amp;Message flow</source>
        <translation>&amp;Nachrichtenfluss</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="111"/>
        <source>&amp;Configuration</source>
        <translation>K&amp;onfiguration</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="112"/>
        <source>&amp;Tenants</source>
        <translation>&amp;Mandanten</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="123"/>
        <source>Not connected</source>
        <translation>Nicht verbunden</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="134"/>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="135"/>
        <source>&amp;Connect…</source>
        <translation>&amp;Verbinden…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="137"/>
        <source>&amp;Disconnect</source>
        <translation>&amp;Trennen</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="139"/>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="141"/>
        <source>&amp;View</source>
        <translation>&amp;Ansicht</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="142"/>
        <source>&amp;Language</source>
        <translation>&amp;Sprache</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="145"/>
        <source>System language</source>
        <translation>Systemsprache</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="157"/>
        <source>The language changes at the next start.</source>
        <translation>Die Sprache wechselt beim nächsten Start.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="162"/>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="163"/>
        <source>&amp;About</source>
        <translation>&amp;Über</translation>
    </message>
    <message numerus="yes">
        <location filename="../dashboard/views/main_window.cpp" line="209"/>
        <source>%n call(s) in flight</source>
        <translation>
            <numerusform>%n Anfrage läuft</numerusform>
            <numerusform>%n Anfragen laufen</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="215"/>
        <source>Cluster as seen by %1 at %2</source>
        <translation>Cluster aus Sicht von %1 um %2</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="235"/>
        <source>About qtrealtime dashboard</source>
        <translation>Über das qtrealtime-Dashboard</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="236"/>
        <source>Operator dashboard for qtrealtime clusters, version %1.</source>
        <translation>Betriebs-Dashboard für qtrealtime-Cluster, Version %1.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::NodesModel</name>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="29"/>
        <source>%1 d %2 h</source>
        <translation>%1 T %2 h</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="32"/>
        <source>%1 h %2 min</source>
        <translation>%1 h %2 min</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="35"/>
        <source>%1 min %2 s</source>
        <translation>%1 min %2 s</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="37"/>
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="63"/>
        <source>Yes</source>
        <translation>Ja</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="63"/>
        <source>No</source>
        <translation>Nein</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="99"/>
        <source>Not enough data yet</source>
        <translation>Noch nicht genug Daten</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="102"/>
        <source>Clients: %1, node links: %2</source>
        <translation>Clients: %1, Knotenverbindungen: %2</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="106"/>
        <source>Reaches the cluster backend</source>
        <translation>Erreicht das Cluster-Backend</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="107"/>
        <source>Does not reach the cluster backend</source>
        <translation>Erreicht das Cluster-Backend nicht</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="138"/>
        <source>Node</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="140"/>
        <source>Region</source>
        <translation>Region</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="142"/>
        <source>Client address</source>
        <translation>Client-Adresse</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="144"/>
        <source>Uptime</source>
        <translation>Betriebszeit</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="146"/>
        <source>Load</source>
        <translation>Last</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="148"/>
        <source>Connections</source>
        <translation>Verbindungen</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="150"/>
        <source>Channels</source>
        <translation>Kanäle</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="152"/>
        <source>Messages in/s</source>
        <translation>Eingehende Nachrichten/s</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="154"/>
        <source>Messages out/s</source>
        <translation>Ausgehende Nachrichten/s</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="156"/>
        <source>Available</source>
        <translation>Verfügbar</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::NodesPage</name>
    <message>
        <location filename="../dashboard/views/nodes_page.cpp" line="20"/>
        <source>CPU load per node</source>
        <translation>CPU-Last pro Knoten</translation>
    </message>
    <message>
        <location filename="../dashboard/views/nodes_page.cpp" line="20"/>
        <source>5-minute load average</source>
        <translation>Lastdurchschnitt (5 Minuten)</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::PlacementModel</name>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="60"/>
        <source>%1 (ready)</source>
        <translation>%1 (bereit)</translation>
    </message>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="63"/>
        <source>%1 (starting)</source>
        <translation>%1 (wird gestartet)</translation>
    </message>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="94"/>
        <source>No change stream runs for this tenant</source>
        <translation>Für diesen Mandanten läuft kein Change-Stream</translation>
    </message>
    <message numerus="yes">
        <location filename="../dashboard/models/placement_model.cpp" line="99"/>
        <source>%1: %n user(s)</source>
        <translation>
            <numerusform>%1: %n Benutzer</numerusform>
            <numerusform>%1: %n Benutzer</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="147"/>
        <source>Tenant</source>
        <translation>Mandant</translation>
    </message>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="149"/>
        <source>Stream owner</source>
        <translation>Stream-Besitzer</translation>
    </message>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="151"/>
        <source>Nodes with clients</source>
        <translation>Knoten mit Clients</translation>
    </message>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="153"/>
        <source>Users</source>
        <translation>Benutzer</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::PlacementPage</name>
    <message>
        <location filename="../dashboard/views/placement_page.cpp" line="91"/>
        <source>Filter tenants</source>
        <translation>Mandanten filtern</translation>
    </message>
    <message>
        <location filename="../dashboard/views/placement_page.cpp" line="98"/>
        <source>Region:</source>
        <translation>Region:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/placement_page.cpp" line="100"/>
        <source>Node:</source>
        <translation>Knoten:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/placement_page.cpp" line="102"/>
        <source>Highlighted: the node that runs the tenant&apos;s change stream (its per-tenant singleton).</source>
        <translation>Hervorgehoben: der Knoten, auf dem der Change-Stream des Mandanten läuft (sein Singleton je Mandant).</translation>
    </message>
    <message>
        <location filename="../dashboard/views/placement_page.cpp" line="152"/>
        <source>All regions</source>
        <translation>Alle Regionen</translation>
    </message>
    <message>
        <location filename="../dashboard/views/placement_page.cpp" line="161"/>
        <source>All nodes</source>
        <translation>Alle Knoten</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::TenantDialog</name>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="44"/>
        <source>Private channels only</source>
        <translation>Nur private Kanäle</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="45"/>
        <source>Presence enabled for every channel</source>
        <translation>Presence für jeden Kanal aktiviert</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="48"/>
        <source>New tenant</source>
        <translation>Neuer Mandant</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="49"/>
        <source>Edit tenant %1</source>
        <translation>Mandant %1 bearbeiten</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="63"/>
        <source>unchanged</source>
        <translation>unverändert</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="65"/>
        <source>the first label of the tenant&apos;s host name</source>
        <translation>das erste Label des Hostnamens des Mandanten</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="66"/>
        <source>at least 32 characters</source>
        <translation>mindestens 32 Zeichen</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="73"/>
        <source>Create</source>
        <translation>Anlegen</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="73"/>
        <source>Save</source>
        <translation>Speichern</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="76"/>
        <source>External id:</source>
        <translation>Externe ID:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="77"/>
        <source>Name:</source>
        <translation>Name:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="78"/>
        <source>JWT secret:</source>
        <translation>JWT-Secret:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="79"/>
        <source>Max concurrent users:</source>
        <translation>Max. gleichzeitige Benutzer:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="80"/>
        <source>Max channels per client:</source>
        <translation>Max. Kanäle pro Client:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="81"/>
        <source>Max events per second:</source>
        <translation>Max. Ereignisse pro Sekunde:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="82"/>
        <source>Max joins per second:</source>
        <translation>Max. Joins pro Sekunde:</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="135"/>
        <source>Enter the tenant&apos;s external id.</source>
        <translation>Geben Sie die externe ID des Mandanten ein.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="138"/>
        <source>Enter the tenant&apos;s JWT secret.</source>
        <translation>Geben Sie das JWT-Secret des Mandanten ein.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::TenantFlowModel</name>
    <message>
        <location filename="../dashboard/models/tenant_flow_model.cpp" line="85"/>
        <source>Tenant</source>
        <translation>Mandant</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenant_flow_model.cpp" line="87"/>
        <source>Node</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenant_flow_model.cpp" line="89"/>
        <source>Messages in/s</source>
        <translation>Eingehende Nachrichten/s</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenant_flow_model.cpp" line="91"/>
        <source>Messages out/s</source>
        <translation>Ausgehende Nachrichten/s</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::TenantsModel</name>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="59"/>
        <location filename="../dashboard/models/tenants_model.cpp" line="61"/>
        <source>Yes</source>
        <translation>Ja</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="59"/>
        <location filename="../dashboard/models/tenants_model.cpp" line="61"/>
        <source>No</source>
        <translation>Nein</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="104"/>
        <source>Tenant</source>
        <translation>Mandant</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="106"/>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="108"/>
        <source>Max users</source>
        <translation>Max. Benutzer</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="110"/>
        <source>Max channels per client</source>
        <translation>Max. Kanäle pro Client</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="112"/>
        <source>Max events/s</source>
        <translation>Max. Ereignisse/s</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="114"/>
        <source>Max joins/s</source>
        <translation>Max. Joins/s</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="116"/>
        <source>Private only</source>
        <translation>Nur privat</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="118"/>
        <source>Presence</source>
        <translation>Presence</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="120"/>
        <source>Extensions</source>
        <translation>Erweiterungen</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="122"/>
        <source>Created</source>
        <translation>Angelegt am</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::TenantsPage</name>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="157"/>
        <source>Re&amp;fresh</source>
        <translation>Ak&amp;tualisieren</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="158"/>
        <source>&amp;New tenant…</source>
        <translation>Ne&amp;uer Mandant…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="159"/>
        <source>&amp;Edit…</source>
        <translation>&amp;Bearbeiten…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="160"/>
        <source>&amp;Suspend</source>
        <translation>&amp;Sperren</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="161"/>
        <source>&amp;Resume</source>
        <translation>&amp;Reaktivieren</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="175"/>
        <source>Filter tenants</source>
        <translation>Mandanten filtern</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="177"/>
        <source>Disconnects the tenant&apos;s clients and refuses new ones.</source>
        <translation>Trennt die Clients des Mandanten und weist neue ab.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="212"/>
        <location filename="../dashboard/views/tenants_page.cpp" line="234"/>
        <source>Select a tenant first.</source>
        <translation>Wählen Sie zuerst einen Mandanten aus.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="256"/>
        <source>Working…</source>
        <translation>In Arbeit…</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::TimeSeriesChart</name>
    <message>
        <location filename="../dashboard/charts/time_series_chart.cpp" line="24"/>
        <source>Time</source>
        <translation>Zeit</translation>
    </message>
</context>
</TS>
