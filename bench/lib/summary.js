'use strict';
// Helpers of the summarize.js scripts: the results file named on the command line, and medians.

const fs = require('node:fs');

/**
 * The result lines (parsed JSON) of the file in argv[2]: the lines `keep(line)` accepts
 * (default: the non-empty ones). Without a file name, prints `usage` and exits 64.
 */
function readResultsArg(usage = 'usage: node summarize.js <results.jsonl>', keep = Boolean) {
  const file = process.argv[2];
  if (!file) {
    console.error(usage);
    process.exit(64);
  }
  return fs.readFileSync(file, 'utf8').split('\n').filter(keep).map((l) => JSON.parse(l));
}

/** The median of the finite numbers among `xs` (anything else is left out); null if none. */
function median(xs) {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

module.exports = { readResultsArg, median };
