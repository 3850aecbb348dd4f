// GET /metrics (Prometheus text format) of a server started with METRICS_JWT_SECRET.
//
//   const series = await metricSeries(server, METRICS_SECRET, 'qtrealtime_stream_claims_total');
//   series.find((s) => s.labels.cause === 'asked_by_peer')?.value
import { operatorToken } from './admin.mjs';
import { httpRequest } from './util.mjs';

/** Parses `name{a="x",b="y"} 12` lines (escapes \\, \" and \n in label values). */
export function parseSeries(text, name) {
    const series = [];
    for (const line of text.split('\n')) {
        if (line.startsWith('#') || !line.startsWith(name)) continue;
        const rest = line.slice(name.length);
        if (rest[0] !== '{' && rest[0] !== ' ') continue; // a longer name with this prefix
        const labels = {};
        let i = 0;
        if (rest[0] === '{') {
            const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/y;
            i = 1;
            while (rest[i] !== '}') {
                re.lastIndex = i;
                const m = re.exec(rest);
                if (!m) throw new Error(`cannot parse metric line: ${line}`);
                labels[m[1]] = m[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
                i = re.lastIndex;
                if (rest[i] === ',') i++;
            }
            i++;
        }
        series.push({ labels, value: Number(rest.slice(i).trim().split(' ')[0]) });
    }
    return series;
}

/** The series of family `name` on `server`; throws unless /metrics answers 200. */
export async function metricSeries(server, secret, name) {
    const res = await httpRequest(server, {
        path: '/metrics', headers: { Authorization: `Bearer ${operatorToken(secret)}` },
    });
    if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${res.body}`);
    return parseSeries(res.body, name);
}

/** Sums the values of the series whose labels include every pair of `match`. */
export function sumWhere(series, match = {}) {
    return series.filter((s) => Object.entries(match).every(([k, v]) => s.labels[k] === v))
        .reduce((total, s) => total + s.value, 0);
}
