// The functions with the most self time in V8 CPU profiles (.cpuprofile, from
// node --cpu-prof), each with its share of the sampled time:
//   node bench/profile-summary.mjs PROFILE... [--top N]
import fs from 'node:fs';

const args = process.argv.slice(2);
const topIndex = args.indexOf('--top');
const top = topIndex >= 0 ? Number(args.splice(topIndex, 2)[1]) : 20;

const selfMs = new Map();  // function name -> sampled self time
let totalMs = 0;
for (const file of args) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const nameOf = new Map(profile.nodes.map((n) => [n.id, n.callFrame.functionName || '(anonymous)']));
  // timeDeltas[i] is the time from sample i - 1 to sample i: the time the
  // sampled function had been running.
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const name = nameOf.get(id);
    if (name === '(idle)' || name === '(program)') return;
    selfMs.set(name, (selfMs.get(name) ?? 0) + ms);
    totalMs += ms;
  });
}
if (totalMs === 0) {
  console.error('profile-summary: no samples');
  process.exit(1);
}
console.log(`self time, ${(totalMs / 1000).toFixed(2)} s sampled (idle excluded):`);
const rows = [...selfMs].sort((a, b) => b[1] - a[1]).slice(0, top);
for (const [name, ms] of rows) {
  console.log(`${(100 * ms / totalMs).toFixed(1).padStart(5)}%  ${(ms / 1000).toFixed(2).padStart(7)} s  ${name}`);
}
