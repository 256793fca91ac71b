// Runs an Emscripten program built for the web (-sENVIRONMENT=web
// -sSINGLE_FILE -sEXIT_RUNTIME=1) in headless Chromium, prints what it
// prints and exits with its exit code: for wasm that Node's V8 cannot run,
// as the relaxed-SIMD kernel tests (tools/test-wasm-kernels.sh). WLLM_*
// environment variables are passed on (WLLM_KERNELS=simd128: the SIMD128
// kernels of the same build).
//   node tools/run-wasm-in-chromium.mjs PROGRAM.js [ARGUMENT...]
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openTestPage } from '../tests/browser/browser.mjs';

const TIMEOUT_MS = 15 * 60 * 1000;

const glue = path.resolve(process.argv[2] ?? '');
if (!process.argv[2] || !fs.existsSync(glue)) {
  console.error('usage: node tools/run-wasm-in-chromium.mjs PROGRAM.js [ARGUMENT...]');
  process.exit(2);
}
const dir = path.dirname(glue);
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('WLLM_')));
fs.writeFileSync(
  path.join(dir, 'run.html'),
  `<!doctype html>
<script>
  window.output = [];
  var Module = {
    arguments: ${JSON.stringify(process.argv.slice(3))},
    preRun: [() => Object.assign(ENV, ${JSON.stringify(env)})],
    print: (text) => output.push(text),
    printErr: (text) => output.push(text),
    onExit: (code) => { window.exitCode = code; },
    onAbort: (what) => { output.push('aborted: ' + what); window.exitCode = 134; },
  };
</script>
<script src="${path.basename(glue)}"></script>
`,
);

// The program runs on the page's main thread as its script loads, so the page
// answers only once main() returns: wait as long as the program may take.
const { page, pageErrors, close } = await openTestPage({
  root: dir, pagePath: 'run.html', readyGlobal: 'Module', models: null, readyTimeout: TIMEOUT_MS,
});
let exitCode = 1;
try {
  const started = Date.now();
  for (;;) {
    const state = await page.evaluate(() => ({ lines: window.output.splice(0), code: window.exitCode }));
    for (const line of state.lines) console.log(line);
    if (state.code !== undefined) {
      exitCode = state.code;
      break;
    }
    if (pageErrors.length > 0) throw new Error(pageErrors.join('\n'));
    if (Date.now() - started > TIMEOUT_MS) throw new Error(`no exit after ${TIMEOUT_MS / 60000} minutes`);
    await sleep(200);
  }
} catch (error) {
  console.error(`run-wasm-in-chromium: ${error.message}`);
} finally {
  await close();
}
process.exit(exitCode);
