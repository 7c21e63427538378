// First run as scripts/start.sh serves it (the embedded model, no flags): each agent client's
// captured first request gets 200 at its real size, and a server started with a context too
// small says which --ctx-size would serve the prompt, in each API's error shape.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startServer } from './server.mjs';

const sharedDir = process.env.DS_SHARED_DIR ?? '../../../shared';
const capturesDir = path.join(sharedDir, 'testdata/captures');
const clients = ['claude-run1', 'qwen-run1', 'opencode-run1', 'codex-tool-a'];
const skip = existsSync(capturesDir) ? false : `no captures under ${capturesDir}`;

function firstRequest(client) {
  const dir = path.join(capturesDir, client);
  for (const file of readdirSync(dir).sort()) {
    const capture = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    if (capture.method === 'POST') return capture;
  }
  throw new Error(`no POST in ${dir}`);
}

// The capture as the client sent it, with a one-token reply to keep the test short.
async function send(server, capture) {
  const body = { ...capture.body, stream: false };
  if (capture.url.startsWith('/v1/responses')) body.max_output_tokens = 16;
  else body.max_tokens = 1;
  const response = await fetch(`${server.baseUrl}${capture.url}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

let server;
before(async () => {
  if (!skip) server = await startServer([], { embedded: true });
});
after(async () => {
  if (server) await server.stop();
});

for (const client of clients) {
  test(`${client}: the first request is served at its real size`, { skip, timeout: 300000 },
    async () => {
      const reply = await send(server, firstRequest(client));
      assert.equal(reply.status, 200, JSON.stringify(reply.body).slice(0, 500));
    });
}

test('a prompt over the context names the --ctx-size that serves it', { skip }, async () => {
  const small = await startServer(['--ctx-size', '2048'], { embedded: true });
  try {
    assert.match(small.log(), /refuses many of them: use --ctx-size 65536/);
    for (const client of ['claude-run1', 'qwen-run1']) {
      const reply = await send(small, firstRequest(client));
      assert.equal(reply.status, 400);
      const message = reply.body.error.message;
      assert.match(message, /context size is 2048: start the server with --ctx-size \d+ or more/);
    }
  } finally {
    await small.stop();
  }
});
