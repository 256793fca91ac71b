// What Linux's /proc says about a process, for the benchmark's memory and
// thread checks (engines in Chromium run in its renderer process).
import fs from 'node:fs';

// Peak resident memory (VmHWM) of process `pid`, in MiB; 0 if unknown.
export function peakRssMib(pid = 'self') {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

// Every live process below `ancestor` (its children, their children, ...).
export function descendants(ancestor) {
  const parents = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent pid is the 2nd field after the ")" that ends the command name.
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended while we looked
    }
  }
  const out = [];
  const below = new Set([ancestor]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of parents) {
      if (below.has(ppid) && !below.has(pid)) {
        below.add(pid);
        out.push(pid);
        grew = true;
      }
    }
  }
  return out;
}

// The command line as one string (Chromium's children rewrite theirs into one).
export function commandLine(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

// The threads of `pid`: Map tid → {name, runNs}: the thread's name (comm)
// and the nanoseconds it has run so far (schedstat's first field: precise
// where utime's 10 ms ticks are not).
export function threadTimes(pid) {
  const threads = new Map();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const runNs = Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      threads.set(tid, { name: fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), runNs });
    } catch {
      // the thread ended
    }
  }
  return threads;
}

// Nanoseconds each thread ran between two threadTimes() snapshots: Map tid → {name, runNs}.
export function threadTimesSince(before, after) {
  const ran = new Map();
  for (const [tid, { name, runNs }] of after) ran.set(tid, { name, runNs: runNs - (before.get(tid)?.runNs ?? 0) });
  return ran;
}
