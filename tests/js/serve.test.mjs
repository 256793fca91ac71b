// The static server of `npm run demo` (tools/serve.mjs --demo): the demo's
// URL is the first thing it prints, and the server root leads to the demo.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import readline from 'node:readline';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../tools/serve.mjs';
import { repoRoot } from './helpers.mjs';

describe('npm run demo\'s server', () => {
  it('prints the demo\'s URL first; the root redirects to the demo page', async () => {
    const server = spawn(process.execPath, [path.join(repoRoot, 'tools/serve.mjs'), '--demo', '--port', '0'],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [firstLine] = await once(readline.createInterface({ input: server.stdout }), 'line');
      const demoUrl = /^demo: (http:\/\/\S+\/web-demo\/) /.exec(firstLine)?.[1];
      expect(demoUrl, firstLine).toBeDefined();
      const demo = await fetch(demoUrl);
      expect(demo.status).toBe(200);
      expect(await demo.text()).toMatch(/<title>[^<]*wasm-llm/i);

      const root = new URL('/', demoUrl).href;
      const redirect = await fetch(root, { redirect: 'manual' });
      expect(redirect.status).toBe(302);
      expect(redirect.headers.get('location')).toBe('/web-demo/');
      const followed = await fetch(root);
      expect([followed.status, followed.url]).toEqual([200, demoUrl]);
      await followed.body.cancel();
    } finally {
      server.kill();
    }
  });

  it('redirects nothing unless asked: the tests\' server answers the root with 404', async () => {
    const server = await startServer({ port: 0 });
    try {
      expect((await fetch(server.url, { redirect: 'manual' })).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
