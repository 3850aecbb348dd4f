<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr_FR">
<context>
    <name>AdminResponses</name>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="181"/>
        <source>The server refused the operator token (%1). The token must be a JWT signed with the cluster&apos;s API_JWT_SECRET.</source>
        <translation>Le serveur a refusé le jeton d’opérateur (%1). Le jeton doit être un JWT signé avec l’API_JWT_SECRET du cluster.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="188"/>
        <source>The server is unavailable (%1).</source>
        <translation>Le serveur est indisponible (%1).</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="190"/>
        <source>The server answered %1.</source>
        <translation>Le serveur a répondu %1.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="192"/>
        <source>The server answered %1: %2</source>
        <translation>Le serveur a répondu %1 : %2</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="203"/>
        <source>The server did not answer in time.</source>
        <translation>Le serveur n’a pas répondu à temps.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="206"/>
        <source>The request was canceled.</source>
        <translation>La requête a été annulée.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="209"/>
        <source>The node could not be verified (%1). A cluster with a CA of its own needs that CA&apos;s certificate as the CA file.</source>
        <translation>Le nœud n’a pas pu être vérifié (%1). Un cluster doté de sa propre autorité de certification a besoin du certificat de celle-ci comme fichier CA.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="214"/>
        <source>The server could not be reached.</source>
        <translation>Le serveur est injoignable.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="215"/>
        <source>The server could not be reached: %1</source>
        <translation>Le serveur est injoignable : %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_responses.cpp" line="227"/>
        <source>The server&apos;s answer could not be read: %1</source>
        <translation>La réponse du serveur n’a pas pu être lue : %1</translation>
    </message>
</context>
<context>
    <name>ConnectionState</name>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="12"/>
        <source>Not connected</source>
        <translation>Non connecté</translation>
    </message>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="14"/>
        <source>Connecting to %1…</source>
        <translation>Connexion à %1…</translation>
    </message>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="16"/>
        <source>Connected to %1</source>
        <translation>Connecté à %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="17"/>
        <source>Connected to %1 (%2)</source>
        <translation>Connecté à %1 (%2)</translation>
    </message>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="20"/>
        <source>Reconnecting: trying %1 in %2 s (attempt %3)…</source>
        <translation>Reconnexion : essai sur %1 dans %2 s (tentative %3)…</translation>
    </message>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="22"/>
        <source>Connection lost (%4) — trying %1 in %2 s (attempt %3)…</source>
        <translation>Connexion perdue (%4) — nouvel essai sur %1 dans %2 s (tentative %3)…</translation>
    </message>
    <message>
        <location filename="../dashboard/api/connection_state.cpp" line="26"/>
        <source>Not connected: %1</source>
        <translation>Non connecté : %1</translation>
    </message>
</context>
<context>
    <name>FailoverAllowlist</name>
    <message>
        <location filename="../dashboard/api/failover_allowlist.cpp" line="69"/>
        <source>&quot;%1&quot; is not a host name, *.domain, IP address or subnet (a failover host has no scheme and no port).</source>
        <translation>« %1 » n’est ni un nom d’hôte, ni un *.domaine, ni une adresse IP, ni un sous-réseau (un hôte de secours n’a ni schéma ni port).</translation>
    </message>
</context>
<context>
    <name>LiveFeedProtocol</name>
    <message>
        <location filename="../dashboard/api/live_feed_protocol.cpp" line="76"/>
        <source>The live feed sent a frame that is not a Phoenix message: %1</source>
        <translation>Le flux en direct a envoyé une trame qui n’est pas un message Phoenix : %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_protocol.cpp" line="104"/>
        <source>The server refused to send the live feed (status &quot;%1&quot;).</source>
        <translation>Le serveur refuse d’envoyer le flux en direct (statut « %1 »).</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_protocol.cpp" line="106"/>
        <source>The server refused to send the live feed: %1</source>
        <translation>Le serveur refuse d’envoyer le flux en direct : %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_protocol.cpp" line="114"/>
        <source>A snapshot from the live feed could not be read: %1</source>
        <translation>Un instantané du flux en direct n’a pas pu être lu : %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_protocol.cpp" line="125"/>
        <source>The server closed the live feed&apos;s channel (%1).</source>
        <translation>Le serveur a fermé le canal du flux en direct (%1).</translation>
    </message>
</context>
<context>
    <name>NodeTls</name>
    <message>
        <location filename="../dashboard/api/node_tls.cpp" line="26"/>
        <source>Cannot read the CA file %1: %2</source>
        <translation>Impossible de lire le fichier CA %1 : %2</translation>
    </message>
    <message>
        <location filename="../dashboard/api/node_tls.cpp" line="29"/>
        <source>The CA file %1 is larger than 4 MiB.</source>
        <translation>Le fichier CA %1 dépasse 4 Mio.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/node_tls.cpp" line="34"/>
        <source>The CA file %1 holds no PEM certificate.</source>
        <translation>Le fichier CA %1 ne contient aucun certificat PEM.</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../dashboard/app/main.cpp" line="40"/>
        <source>Operator dashboard for qtrealtime clusters.</source>
        <translation>Tableau de bord d’exploitation des clusters qtrealtime.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="45"/>
        <source>Connect to the node at &lt;url&gt; at start.</source>
        <translation>Se connecter au démarrage au nœud à l’adresse &lt;url&gt;.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="49"/>
        <source>The operator token (a JWT signed with API_JWT_SECRET, role service_role).</source>
        <translation>Le jeton d’opérateur (un JWT signé avec API_JWT_SECRET, rôle service_role).</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="55"/>
        <source>Wait for the first snapshot and a few live updates, write one PNG per view into &lt;dir&gt;, exit.</source>
        <translation>Attendre le premier instantané et quelques mises à jour en direct, écrire un PNG par vue dans &lt;dir&gt;, quitter.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="61"/>
        <source>Interface language (de, fr, en); default: the system&apos;s or the one chosen in the app.</source>
        <translation>Langue de l’interface (de, fr, en) ; par défaut : celle du système ou celle choisie dans l’application.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="67"/>
        <source>Trust only the certificate authorities in &lt;pem&gt; for https nodes (default: the system&apos;s).</source>
        <translation>Pour les nœuds https, ne faire confiance qu’aux autorités de certification de &lt;pem&gt; (par défaut : celles du système).</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="73"/>
        <source>Fail over only to these hosts (comma-separated names, *.domain, addresses or subnets; default: the cluster&apos;s members under the same scheme).</source>
        <translation>Ne basculer que vers ces hôtes (noms, *.domaine, adresses ou sous-réseaux séparés par des virgules ; par défaut : les membres du cluster sous le même schéma).</translation>
    </message>
    <message>
        <location filename="../dashboard/app/main.cpp" line="131"/>
        <source>--screenshot needs --connect and --token.
</source>
        <translation>--screenshot nécessite --connect et --token.
</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::AdminClient</name>
    <message>
        <location filename="../dashboard/api/admin_client.cpp" line="78"/>
        <source>Not connected to a node.</source>
        <translation>Non connecté à un nœud.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_client.cpp" line="147"/>
        <location filename="../dashboard/api/admin_client.cpp" line="169"/>
        <source>&quot;%1&quot; is not a configuration key.</source>
        <translation>« %1 » n’est pas une clé de configuration.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_client.cpp" line="150"/>
        <source>A temporary value needs an expiry of at least one second.</source>
        <translation>Une valeur temporaire doit expirer après au moins une seconde.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_client.cpp" line="155"/>
        <source>The value of %1 is not valid JSON: %2</source>
        <translation>La valeur de %1 n’est pas du JSON valide : %2</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_client.cpp" line="187"/>
        <location filename="../dashboard/api/admin_client.cpp" line="203"/>
        <location filename="../dashboard/api/admin_client.cpp" line="226"/>
        <source>&quot;%1&quot; is not a tenant id.</source>
        <translation>« %1 » n’est pas un identifiant de locataire.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/admin_client.cpp" line="195"/>
        <source>A new tenant needs an external id.</source>
        <translation>Un nouveau locataire doit avoir un identifiant externe.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::ConfigEditDialog</name>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="34"/>
        <source>The value is empty; enter JSON, e.g. {&quot;key&quot;: 1}.</source>
        <translation>La valeur est vide ; saisissez du JSON, par exemple {&quot;key&quot;: 1}.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="37"/>
        <source>The value is not valid JSON: %1 (at character %2).</source>
        <translation>La valeur n’est pas du JSON valide : %1 (au caractère %2).</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="52"/>
        <source>Temporary override (expires by itself)</source>
        <translation>Surcharge temporaire (expire d’elle-même)</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="56"/>
        <source>New configuration key</source>
        <translation>Nouvelle clé de configuration</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="56"/>
        <source>Edit %1</source>
        <translation>Modifier %1</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="58"/>
        <source>e.g. region_mapping or tenant_limits.&lt;tenant&gt;</source>
        <translation>par ex. region_mapping ou tenant_limits.&lt;locataire&gt;</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="62"/>
        <source> s</source>
        <translation> s</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="68"/>
        <source>Save</source>
        <translation>Enregistrer</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="71"/>
        <source>Key:</source>
        <translation>Clé :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="72"/>
        <source>Value (JSON):</source>
        <translation>Valeur (JSON) :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="74"/>
        <source>Expires after:</source>
        <translation>Expire après :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="103"/>
        <source>Enter a key.</source>
        <translation>Saisissez une clé.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::ConfigModel</name>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="53"/>
        <source>Yes</source>
        <translation>Oui</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="49"/>
        <source>No</source>
        <translation>Non</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="52"/>
        <source>Until %1</source>
        <translation>Jusqu’à %1</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="60"/>
        <source>A temporary override: its lease ends at %1</source>
        <translation>Une surcharge temporaire : son bail se termine le %1</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="62"/>
        <source>A temporary override: it expires with its lease</source>
        <translation>Une surcharge temporaire : elle expire avec son bail</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="103"/>
        <source>Key</source>
        <translation>Clé</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="105"/>
        <source>Value</source>
        <translation>Valeur</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="107"/>
        <source>Revision</source>
        <translation>Révision</translation>
    </message>
    <message>
        <location filename="../dashboard/models/config_model.cpp" line="109"/>
        <source>Temporary</source>
        <translation>Temporaire</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::ConfigPage</name>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="121"/>
        <source>&amp;Add…</source>
        <translation>A&amp;jouter…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="122"/>
        <source>&amp;Edit…</source>
        <translation>M&amp;odifier…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="123"/>
        <source>&amp;Temporary override…</source>
        <translation>Surcharge &amp;temporaire…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="124"/>
        <source>&amp;Delete</source>
        <translation>&amp;Supprimer</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="127"/>
        <source>&amp;Reapply my change</source>
        <translation>&amp;Réappliquer ma modification</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="142"/>
        <source>&amp;Keep the current value</source>
        <translation>&amp;Garder la valeur actuelle</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="188"/>
        <location filename="../dashboard/views/config_page.cpp" line="212"/>
        <source>Select a key first.</source>
        <translation>Sélectionnez d’abord une clé.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="224"/>
        <source>Someone else changed %1 first (now at revision %2). Current value: %3
Your value: %4</source>
        <translation>Quelqu’un d’autre a modifié %1 avant vous (désormais en révision %2). Valeur actuelle : %3
Votre valeur : %4</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="228"/>
        <source>(deleted)</source>
        <translation>(supprimée)</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="231"/>
        <source>Conflict: nothing was overwritten.</source>
        <translation>Conflit : rien n’a été écrasé.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="236"/>
        <source>Saved %1 (revision %2).</source>
        <translation>%1 enregistrée (révision %2).</translation>
    </message>
    <message>
        <location filename="../dashboard/views/config_page.cpp" line="250"/>
        <source>Saving…</source>
        <translation>Enregistrement…</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::ConnectDialog</name>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="38"/>
        <source>Connect to a cluster</source>
        <translation>Se connecter à un cluster</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="39"/>
        <source>http://node-a:4000</source>
        <translation>http://node-a:4000</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="42"/>
        <source>a JWT signed with API_JWT_SECRET, role service_role</source>
        <translation>un JWT signé avec API_JWT_SECRET, rôle service_role</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="43"/>
        <source>the system&apos;s certificate authorities</source>
        <translation>les autorités de certification du système</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="44"/>
        <source>PEM file of the certificate authorities that sign the nodes&apos; certificates (https). When set, only these are trusted.</source>
        <translation>Fichier PEM des autorités de certification qui signent les certificats des nœuds (https). S’il est indiqué, seules celles-ci sont reconnues.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="47"/>
        <source>Browse…</source>
        <translation>Parcourir…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="52"/>
        <source>the cluster&apos;s members under the same scheme</source>
        <translation>les membres du cluster sous le même schéma</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="53"/>
        <source>Hosts the dashboard may switch to when the node fails, separated by commas: names, *.domain, addresses or subnets such as 10.0.0.0/8. The token is only ever sent to them.</source>
        <translation>Hôtes vers lesquels le tableau de bord peut basculer quand le nœud tombe, séparés par des virgules : noms, *.domaine, adresses ou sous-réseaux comme 10.0.0.0/8. Le jeton n’est envoyé qu’à eux.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="58"/>
        <source>Connect</source>
        <translation>Se connecter</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="60"/>
        <source>Node URL:</source>
        <translation>URL du nœud :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="61"/>
        <source>Operator token:</source>
        <translation>Jeton d’opérateur :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="62"/>
        <source>CA file:</source>
        <translation>Fichier CA :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="63"/>
        <source>Failover hosts:</source>
        <translation>Hôtes de secours :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="90"/>
        <source>Certificate authorities (PEM)</source>
        <translation>Autorités de certification (PEM)</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="93"/>
        <source>PEM certificates (*.pem *.crt *.cer)</source>
        <translation>Certificats PEM (*.pem *.crt *.cer)</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="93"/>
        <source>All files (*)</source>
        <translation>Tous les fichiers (*)</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::ConnectionManager</name>
    <message>
        <location filename="../dashboard/api/connection_manager.cpp" line="50"/>
        <source>&quot;%1&quot; is not the URL of a node (e.g. http://host:4000).</source>
        <translation>« %1 » n’est pas l’URL d’un nœud (par ex. http://host:4000).</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::DashboardApplication</name>
    <message numerus="yes">
        <location filename="../dashboard/app/dashboard_application.cpp" line="135"/>
        <source>%n tenant(s).</source>
        <translation>
            <numerusform>%n locataire.</numerusform>
            <numerusform>%n locataires.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="169"/>
        <source>Deleted %1.</source>
        <translation>%1 supprimée.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="171"/>
        <source>%1 changed meanwhile (revision %2): nothing was deleted.</source>
        <translation>%1 a été modifiée entre-temps (révision %2) : rien n’a été supprimé.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="187"/>
        <source>Created %1.</source>
        <translation>%1 créé.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="201"/>
        <source>Saved %1.</source>
        <translation>%1 enregistré.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="214"/>
        <source>Suspended %1: its clients are disconnected.</source>
        <translation>%1 suspendu : ses clients sont déconnectés.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="215"/>
        <source>Resumed %1.</source>
        <translation>%1 réactivé.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="242"/>
        <source>No full picture within %1 s (%2 snapshot(s) received).</source>
        <translation>Pas de vue complète en %1 s (%2 instantané(s) reçu(s)).</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="257"/>
        <source>Cannot create %1.</source>
        <translation>Impossible de créer %1.</translation>
    </message>
    <message>
        <location filename="../dashboard/app/dashboard_application.cpp" line="266"/>
        <location filename="../dashboard/app/dashboard_application.cpp" line="280"/>
        <source>Cannot write %1.</source>
        <translation>Impossible d’écrire %1.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::FlowGraph</name>
    <message>
        <location filename="../dashboard/widgets/flow_graph.cpp" line="16"/>
        <source>Message flow between nodes</source>
        <translation>Flux de messages entre les nœuds</translation>
    </message>
    <message>
        <location filename="../dashboard/widgets/flow_graph.cpp" line="92"/>
        <source>No nodes</source>
        <translation>Aucun nœud</translation>
    </message>
    <message>
        <location filename="../dashboard/widgets/flow_graph.cpp" line="128"/>
        <source>%1/s</source>
        <translation>%1/s</translation>
    </message>
    <message>
        <location filename="../dashboard/widgets/flow_graph.cpp" line="134"/>
        <source>The busiest %1 of %2 links</source>
        <translation>Les %1 liaisons les plus chargées sur %2</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::FlowPage</name>
    <message>
        <location filename="../dashboard/views/flow_page.cpp" line="44"/>
        <source>Busiest tenants</source>
        <translation>Locataires les plus actifs</translation>
    </message>
    <message>
        <location filename="../dashboard/views/flow_page.cpp" line="44"/>
        <source>messages/s</source>
        <translation>messages/s</translation>
    </message>
    <message>
        <location filename="../dashboard/views/flow_page.cpp" line="56"/>
        <source>Search all tenants</source>
        <translation>Rechercher parmi tous les locataires</translation>
    </message>
    <message>
        <location filename="../dashboard/views/flow_page.cpp" line="99"/>
        <source>The busiest %1 of %2 tenant flows; search to see any tenant.</source>
        <translation>Les %1 flux de locataires les plus chargés sur %2 ; recherchez pour voir n’importe quel locataire.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::LinkFlowModel</name>
    <message>
        <location filename="../dashboard/models/link_flow_model.cpp" line="81"/>
        <source>From</source>
        <translation>De</translation>
    </message>
    <message>
        <location filename="../dashboard/models/link_flow_model.cpp" line="83"/>
        <source>To</source>
        <translation>Vers</translation>
    </message>
    <message>
        <location filename="../dashboard/models/link_flow_model.cpp" line="85"/>
        <source>Messages/s</source>
        <translation>Messages/s</translation>
    </message>
    <message>
        <location filename="../dashboard/models/link_flow_model.cpp" line="87"/>
        <source>Bytes/s</source>
        <translation>Octets/s</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::LiveFeedConnection</name>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="119"/>
        <source>The node closed the live feed (code %1).</source>
        <translation>Le nœud a fermé le flux en direct (code %1).</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="120"/>
        <source>The node closed the live feed (code %1): %2</source>
        <translation>Le nœud a fermé le flux en direct (code %1) : %2</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="131"/>
        <source>The live feed failed: %1</source>
        <translation>Le flux en direct a échoué : %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="132"/>
        <source>The live feed could not be opened: %1</source>
        <translation>Le flux en direct n’a pas pu être ouvert : %1</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="138"/>
        <source>The node did not answer the last heartbeat within %1 s.</source>
        <translation>Le nœud n’a pas répondu au dernier heartbeat en %1 s.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="148"/>
        <source>The node sent nothing for %1 s.</source>
        <translation>Le nœud n’a rien envoyé pendant %1 s.</translation>
    </message>
    <message>
        <location filename="../dashboard/api/live_feed_connection.cpp" line="150"/>
        <source>The node did not accept the live feed&apos;s connection within %1 s.</source>
        <translation>Le nœud n’a pas accepté la connexion du flux en direct en %1 s.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::MainWindow</name>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="100"/>
        <source>qtrealtime dashboard</source>
        <translation>Tableau de bord qtrealtime</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="119"/>
        <source>Cluster overview</source>
        <translation>Vue d’ensemble du cluster</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="114"/>
        <source>Connect to a node to see its cluster: nodes and their CPU load, tenant placement and message flow.</source>
        <translation>Connectez-vous à un nœud pour voir son cluster : les nœuds et leur charge CPU, le placement des locataires et le flux des messages.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="108"/>
        <source>&amp;Nodes</source>
        <translation>&amp;Nœuds</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="109"/>
        <source>&amp;Placement</source>
        <translation>&amp;Placement</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="110"/>
        <source>&amp;Message flow</source>
        <translation>Flux de &amp;messages</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="111"/>
        <source>&amp;Configuration</source>
        <translation>&amp;Configuration</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="112"/>
        <source>&amp;Tenants</source>
        <translation>&amp;Locataires</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="123"/>
        <source>Not connected</source>
        <translation>Non connecté</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="134"/>
        <source>&amp;File</source>
        <translation>&amp;Fichier</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="135"/>
        <source>&amp;Connect…</source>
        <translation>&amp;Se connecter…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="137"/>
        <source>&amp;Disconnect</source>
        <translation>Se &amp;déconnecter</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="139"/>
        <source>&amp;Quit</source>
        <translation>&amp;Quitter</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="141"/>
        <source>&amp;View</source>
        <translation>Aff&amp;ichage</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="142"/>
        <source>&amp;Language</source>
        <translation>&amp;Langue</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="145"/>
        <source>System language</source>
        <translation>Langue du système</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="157"/>
        <source>The language changes at the next start.</source>
        <translation>La langue changera au prochain démarrage.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="162"/>
        <source>&amp;Help</source>
        <translation>&amp;Aide</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="163"/>
        <source>&amp;About</source>
        <translation>À &amp;propos</translation>
    </message>
    <message numerus="yes">
        <location filename="../dashboard/views/main_window.cpp" line="209"/>
        <source>%n call(s) in flight</source>
        <translation>
            <numerusform>%n appel en cours</numerusform>
            <numerusform>%n appels en cours</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="215"/>
        <source>Cluster as seen by %1 at %2</source>
        <translation>Cluster vu par %1 à %2</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="235"/>
        <source>About qtrealtime dashboard</source>
        <translation>À propos du tableau de bord qtrealtime</translation>
    </message>
    <message>
        <location filename="../dashboard/views/main_window.cpp" line="236"/>
        <source>Operator dashboard for qtrealtime clusters, version %1.</source>
        <translation>Tableau de bord d’exploitation des clusters qtrealtime, version %1.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::NodesModel</name>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="29"/>
        <source>%1 d %2 h</source>
        <translation>%1 j %2 h</translation>
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
        <translation>Oui</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="63"/>
        <source>No</source>
        <translation>Non</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="99"/>
        <source>Not enough data yet</source>
        <translation>Pas encore assez de données</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="102"/>
        <source>Clients: %1, node links: %2</source>
        <translation>Clients : %1, liaisons entre nœuds : %2</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="106"/>
        <source>Reaches the cluster backend</source>
        <translation>Atteint le backend du cluster</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="107"/>
        <source>Does not reach the cluster backend</source>
        <translation>N’atteint pas le backend du cluster</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="138"/>
        <source>Node</source>
        <translation>Nœud</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="140"/>
        <source>Region</source>
        <translation>Région</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="142"/>
        <source>Client address</source>
        <translation>Adresse client</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="144"/>
        <source>Uptime</source>
        <translation>Temps de fonctionnement</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="146"/>
        <source>Load</source>
        <translation>Charge</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="148"/>
        <source>Connections</source>
        <translation>Connexions</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="150"/>
        <source>Channels</source>
        <translation>Canaux</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="152"/>
        <source>Messages in/s</source>
        <translation>Messages entrants/s</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="154"/>
        <source>Messages out/s</source>
        <translation>Messages sortants/s</translation>
    </message>
    <message>
        <location filename="../dashboard/models/nodes_model.cpp" line="156"/>
        <source>Available</source>
        <translation>Disponible</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::NodesPage</name>
    <message>
        <location filename="../dashboard/views/nodes_page.cpp" line="20"/>
        <source>CPU load per node</source>
        <translation>Charge CPU par nœud</translation>
    </message>
    <message>
        <location filename="../dashboard/views/nodes_page.cpp" line="20"/>
        <source>5-minute load average</source>
        <translation>Charge moyenne sur 5 minutes</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::PlacementModel</name>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="60"/>
        <source>%1 (ready)</source>
        <translation>%1 (prêt)</translation>
    </message>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="63"/>
        <source>%1 (starting)</source>
        <translation>%1 (démarrage)</translation>
    </message>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="94"/>
        <source>No change stream runs for this tenant</source>
        <translation>Aucun flux de modifications ne tourne pour ce locataire</translation>
    </message>
    <message numerus="yes">
        <location filename="../dashboard/models/placement_model.cpp" line="99"/>
        <source>%1: %n user(s)</source>
        <translation>
            <numerusform>%1 : %n utilisateur</numerusform>
            <numerusform>%1 : %n utilisateurs</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="147"/>
        <source>Tenant</source>
        <translation>Locataire</translation>
    </message>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="149"/>
        <source>Stream owner</source>
        <translation>Propriétaire du flux</translation>
    </message>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="151"/>
        <source>Nodes with clients</source>
        <translation>Nœuds avec clients</translation>
    </message>
    <message>
        <location filename="../dashboard/models/placement_model.cpp" line="153"/>
        <source>Users</source>
        <translation>Utilisateurs</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::PlacementPage</name>
    <message>
        <location filename="../dashboard/views/placement_page.cpp" line="91"/>
        <source>Filter tenants</source>
        <translation>Filtrer les locataires</translation>
    </message>
    <message>
        <location filename="../dashboard/views/placement_page.cpp" line="98"/>
        <source>Region:</source>
        <translation>Région :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/placement_page.cpp" line="100"/>
        <source>Node:</source>
        <translation>Nœud :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/placement_page.cpp" line="102"/>
        <source>Highlighted: the node that runs the tenant&apos;s change stream (its per-tenant singleton).</source>
        <translation>En surbrillance : le nœud qui exécute le flux de modifications du locataire (son singleton par locataire).</translation>
    </message>
    <message>
        <location filename="../dashboard/views/placement_page.cpp" line="152"/>
        <source>All regions</source>
        <translation>Toutes les régions</translation>
    </message>
    <message>
        <location filename="../dashboard/views/placement_page.cpp" line="161"/>
        <source>All nodes</source>
        <translation>Tous les nœuds</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::TenantDialog</name>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="44"/>
        <source>Private channels only</source>
        <translation>Canaux privés uniquement</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="45"/>
        <source>Presence enabled for every channel</source>
        <translation>Presence activée pour chaque canal</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="48"/>
        <source>New tenant</source>
        <translation>Nouveau locataire</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="49"/>
        <source>Edit tenant %1</source>
        <translation>Modifier le locataire %1</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="63"/>
        <source>unchanged</source>
        <translation>inchangé</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="65"/>
        <source>the first label of the tenant&apos;s host name</source>
        <translation>le premier label du nom d’hôte du locataire</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="66"/>
        <source>at least 32 characters</source>
        <translation>au moins 32 caractères</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="73"/>
        <source>Create</source>
        <translation>Créer</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="73"/>
        <source>Save</source>
        <translation>Enregistrer</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="76"/>
        <source>External id:</source>
        <translation>Identifiant externe :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="77"/>
        <source>Name:</source>
        <translation>Nom :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="78"/>
        <source>JWT secret:</source>
        <translation>Secret JWT :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="79"/>
        <source>Max concurrent users:</source>
        <translation>Utilisateurs simultanés max. :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="80"/>
        <source>Max channels per client:</source>
        <translation>Canaux par client max. :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="81"/>
        <source>Max events per second:</source>
        <translation>Événements par seconde max. :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="82"/>
        <source>Max joins per second:</source>
        <translation>Joins par seconde max. :</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="135"/>
        <source>Enter the tenant&apos;s external id.</source>
        <translation>Saisissez l’identifiant externe du locataire.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="138"/>
        <source>Enter the tenant&apos;s JWT secret.</source>
        <translation>Saisissez le secret JWT du locataire.</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::TenantFlowModel</name>
    <message>
        <location filename="../dashboard/models/tenant_flow_model.cpp" line="85"/>
        <source>Tenant</source>
        <translation>Locataire</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenant_flow_model.cpp" line="87"/>
        <source>Node</source>
        <translation>Nœud</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenant_flow_model.cpp" line="89"/>
        <source>Messages in/s</source>
        <translation>Messages entrants/s</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenant_flow_model.cpp" line="91"/>
        <source>Messages out/s</source>
        <translation>Messages sortants/s</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::TenantsModel</name>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="59"/>
        <location filename="../dashboard/models/tenants_model.cpp" line="61"/>
        <source>Yes</source>
        <translation>Oui</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="59"/>
        <location filename="../dashboard/models/tenants_model.cpp" line="61"/>
        <source>No</source>
        <translation>Non</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="104"/>
        <source>Tenant</source>
        <translation>Locataire</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="106"/>
        <source>Name</source>
        <translation>Nom</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="108"/>
        <source>Max users</source>
        <translation>Utilisateurs max.</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="110"/>
        <source>Max channels per client</source>
        <translation>Canaux par client max.</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="112"/>
        <source>Max events/s</source>
        <translation>Événements/s max.</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="114"/>
        <source>Max joins/s</source>
        <translation>Joins/s max.</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="116"/>
        <source>Private only</source>
        <translation>Privé uniquement</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="118"/>
        <source>Presence</source>
        <translation>Presence</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="120"/>
        <source>Extensions</source>
        <translation>Extensions</translation>
    </message>
    <message>
        <location filename="../dashboard/models/tenants_model.cpp" line="122"/>
        <source>Created</source>
        <translation>Créé le</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::TenantsPage</name>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="157"/>
        <source>Re&amp;fresh</source>
        <translation>Ac&amp;tualiser</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="158"/>
        <source>&amp;New tenant…</source>
        <translation>Nou&amp;veau locataire…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="159"/>
        <source>&amp;Edit…</source>
        <translation>M&amp;odifier…</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="160"/>
        <source>&amp;Suspend</source>
        <translation>&amp;Suspendre</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="161"/>
        <source>&amp;Resume</source>
        <translation>&amp;Réactiver</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="175"/>
        <source>Filter tenants</source>
        <translation>Filtrer les locataires</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="177"/>
        <source>Disconnects the tenant&apos;s clients and refuses new ones.</source>
        <translation>Déconnecte les clients du locataire et refuse les nouveaux.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="212"/>
        <location filename="../dashboard/views/tenants_page.cpp" line="234"/>
        <source>Select a tenant first.</source>
        <translation>Sélectionnez d’abord un locataire.</translation>
    </message>
    <message>
        <location filename="../dashboard/views/tenants_page.cpp" line="256"/>
        <source>Working…</source>
        <translation>En cours…</translation>
    </message>
</context>
<context>
    <name>rt::dashboard::TimeSeriesChart</name>
    <message>
        <location filename="../dashboard/charts/time_series_chart.cpp" line="24"/>
        <source>Time</source>
        <translation>Heure</translation>
    </message>
</context>
</TS>
