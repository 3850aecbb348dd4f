// Real certificates for the e2e tests, made with the openssl command line: a throwaway CA
// (ECDSA P-256) and leaves with subjectAltNames, as PEM files in a temporary directory.
//
//   const ca = makeCertificateAuthority();            // { dir, caFile, caPem, issue, remove }
//   const leaf = ca.issue('server', { dns: ['localhost'], ips: ['127.0.0.1'] });
//   leaf.certFile, leaf.keyFile, leaf.certPem
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function openssl(args, cwd) {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A new CA in its own temporary directory; `remove()` deletes it with everything it issued. */
export function makeCertificateAuthority(name = 'qtrealtime e2e CA') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-ca-'));
    openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'ca.key'], dir);
    openssl(['req', '-x509', '-new', '-key', 'ca.key', '-sha256', '-days', '30', '-subj', `/CN=${name}`,
        '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
        '-out', 'ca.crt'], dir);
    const caFile = path.join(dir, 'ca.crt');
    let serial = 1;
    return {
        dir,
        caFile,
        caPem: fs.readFileSync(caFile, 'utf8'),
        /**
         * A leaf <stem>.crt / <stem>.key signed by this CA.
         * @param {object} [opts] { dns: names, ips: addresses, days, cn }
         */
        issue(stem, { dns = [], ips = [], days = 30, cn } = {}) {
            const key = `${stem}.key`;
            const csr = `${stem}.csr`;
            const crt = `${stem}.crt`;
            const ext = `${stem}.ext`;
            const alt = [...dns.map((d) => `DNS:${d}`), ...ips.map((i) => `IP:${i}`)].join(',');
            fs.writeFileSync(path.join(dir, ext),
                `basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n${alt ? `subjectAltName=${alt}\n` : ''}`);
            openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key], dir);
            openssl(['req', '-new', '-key', key, '-subj', `/CN=${cn ?? dns[0] ?? stem}`, '-out', csr], dir);
            const validity = ['-days', String(days)];
            openssl(['x509', '-req', '-in', csr, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', String(++serial),
                '-sha256', ...validity, '-extfile', ext, '-out', crt], dir);
            fs.chmodSync(path.join(dir, key), 0o600);
            return {
                certFile: path.join(dir, crt),
                keyFile: path.join(dir, key),
                certPem: fs.readFileSync(path.join(dir, crt), 'utf8'),
                keyPem: fs.readFileSync(path.join(dir, key), 'utf8'),
            };
        },
        remove() {
            fs.rmSync(dir, { recursive: true, force: true });
        },
    };
}
