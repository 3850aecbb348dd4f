'use strict';
// Command-line options of the loadgens: `--name value` or `--name=value`, every name one of the
// defaults' keys, numbers where the default is a number. A boolean default makes a flag:
// `--name` alone is true (it takes no value, so the next argument stays an option), and
// `--name=false` turns it off. One parser, so the loadgens accept exactly the same syntax.

/** The pgchanges/regex loadgens' --help: the defaults, one `--name value` a line. */
function printDefaults(defaults) {
  process.stdout.write(`options and defaults:\n${Object.entries(defaults).map(([k, v]) => `  --${k} ${JSON.stringify(v)}`).join('\n')}\n`);
  process.exit(0);
}

/**
 * Parse `argv` over `defaults`; returns a new object. `help()` is called for --help / -h (it
 * exits). Throws an Error with the message to print for anything else that does not fit.
 */
function parseOptions(argv, defaults, help = () => printDefaults(defaults)) {
  const o = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') help();
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    let key = a.slice(2);
    let val;
    const eq = key.indexOf('=');
    if (eq >= 0) {
      val = key.slice(eq + 1);
      key = key.slice(0, eq);
    } else if (typeof defaults[key] === 'boolean') {
      val = 'true';
    } else {
      val = argv[++i];
    }
    if (!(key in defaults)) throw new Error(`unknown option --${key}`);
    if (typeof defaults[key] === 'boolean') {
      if (!['true', 'false'].includes(val)) throw new Error(`--${key}: true or false, not ${val}`);
      o[key] = val === 'true';
      continue;
    }
    if (val === undefined) throw new Error(`--${key} needs a value`);
    o[key] = typeof defaults[key] === 'number' ? Number(val) : val;
    if (typeof defaults[key] === 'number' && !Number.isFinite(o[key])) throw new Error(`--${key}: not a number`);
  }
  return o;
}

/** `parse(process.argv.slice(2))`; on an error, print `<name>: <message>` and exit 64 (usage). */
function optionsOrExit(name, parse) {
  try {
    return parse(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${name}: ${e.message}\n`);
    process.exit(64);
  }
}

module.exports = { parseOptions, printDefaults, optionsOrExit };
