// Beyond --parallel and --max-queue the server answers 503 with Retry-After instead of queueing
// without bound.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';

let server;

before(async () => {
  server = await startServer(['--parallel', '1', '--max-queue', '1']);
});

after(async () => {
  await server.stop();
});

test('requests beyond the queue get 503 with Retry-After', async () => {
  const body = JSON.stringify({
    model: 'm', messages: [{ role: 'user', content: 'write a lot' }], max_tokens: 300,
  });
  const send = () => fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body,
  });
  const responses = await Promise.all([send(), send(), send(), send(), send()]);
  const statuses = responses.map((r) => r.status);
  assert.ok(statuses.includes(200), statuses.join(','));
  const busy = responses.filter((r) => r.status === 503);
  assert.ok(busy.length >= 1, statuses.join(','));
  assert.equal(busy[0].headers.get('retry-after'), '1');
  const error = await busy[0].json();
  assert.equal(typeof error.error.message, 'string');

  // Each refusal has its one log line and its count, like every other request.
  // The log arrives through a pipe.
  const busyLines = () => server.log().split('\n')
    .filter((l) => / POST \/v1\/chat\/completions 503 busy from /.test(l)).length;
  for (let i = 0; i < 50 && busyLines() < busy.length; ++i) await new Promise((r) => setTimeout(r, 100));
  assert.equal(busyLines(), busy.length, server.log());
  const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
  assert.match(metrics,
    new RegExp(`^deltaserve_http_requests_total\\{outcome="busy",status="503"\\} ${busy.length}$`, 'm'));
});
