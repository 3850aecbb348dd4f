'use strict';
// /proc probes shared by the loadgens: CPU and RSS of a process, this process, the machine, and
// the scheduler priority of our own session. Linux only, like the whole bench.

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');

/** Clock ticks per second, the unit of the CPU times in /proc (100 where getconf fails). */
const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** { ppid, cpu } of a process (cpu = utime + stime in seconds), or null if it is gone. */
function procStat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' '); // f[0] is field 3 (state)
    return { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / CLK_TCK };
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) of `pid`; null for pid 0 or a process that is gone. */
function procCpuSec(pid) {
  if (!pid) return null;
  const st = procStat(pid);
  return st ? st.cpu : null;
}

/** Resident set size of `pid` in KiB; null for pid 0 or a process that is gone. */
function procRssKB(pid) {
  if (!pid) return null;
  try {
    const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** CPU seconds this process has used (user + system). */
function selfCpuSec() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

const loadavg = () => fs.readFileSync('/proc/loadavg', 'latin1').split(' ').slice(0, 3).map(Number);

/** Machine-wide CPU seconds from /proc/stat: busy (not idle/iowait) and all, summed over cores. */
function cpuTotals() {
  const f = fs.readFileSync('/proc/stat', 'latin1').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { busy: (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) / CLK_TCK, all: f.slice(0, 8).reduce((x, y) => x + y, 0) / CLK_TCK };
}

/**
 * Raise our priority against other sessions' work (builds on the same machine). With
 * CONFIG_SCHED_AUTOGROUP a process nice only counts inside its session's group, so the run.sh
 * scripts start us with setsid and we set the group's nice. Silently does nothing without
 * permission.
 */
function setAutogroupNice(nice) {
  if (!nice) return;
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'latin1');
    const sid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]); // field 6: session
    if (sid === process.pid) fs.writeFileSync('/proc/self/autogroup', String(nice));
  } catch {
    /* not permitted or no autogroup support: run at normal priority */
  }
}

module.exports = { CLK_TCK, procStat, procCpuSec, procRssKB, selfCpuSec, loadavg, cpuTotals, setAutogroupNice };
