// Settings come from flags, the config file and the environment, in that order of precedence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer } from './server.mjs';

test('flag beats config file beats environment', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'deltaserve-config-'));
  const config = path.join(dir, 'deltaserve.toml');
  writeFileSync(config, '[serve]\nparallel = 3\nmax-queue = 5\nalias = ["cfg-alias"]\n');
  process.env.DELTASERVE_PARALLEL = '7';
  process.env.DELTASERVE_MODEL_ID = 'from-env';
  const server = await startServer(['--config', config, '--max-queue', '9']);
  delete process.env.DELTASERVE_PARALLEL;
  delete process.env.DELTASERVE_MODEL_ID;
  try {
    const health = await (await fetch(`${server.baseUrl}/health`)).json();
    assert.equal(health.parallel, 3);   // config over environment
    assert.equal(health.max_queue, 9);  // flag over config
    const models = await (await fetch(`${server.baseUrl}/v1/models`)).json();
    const ids = models.data.map((m) => m.id);
    assert.deepEqual(ids, ['from-env', 'cfg-alias']);  // environment where nothing else is set
  } finally {
    await server.stop();
  }
});

test('with no model given it serves the embedded one, on loopback', async () => {
  const server = await startServer([], { embedded: true });
  try {
    assert.match(server.log(), /listening on http:\/\/127\.0\.0\.1:\d+/);
    assert.match(server.log(), /serving deltaserve-default \(qwen35moe\)/);
    const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'any', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 3 }),
    });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.choices[0].message.role, 'assistant');
  } finally {
    await server.stop();
  }
});

test('the cache config file sets the cache, and cache flags override its keys', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'deltaserve-cache-config-'));
  const config = path.join(dir, 'cache.json');
  const cacheDir = path.join(dir, 'from-config');
  writeFileSync(config, JSON.stringify({ memory: { size_mib: 512 }, disk: { dir: cacheDir, cap_gb: 2 } }));
  const server = await startServer(['--cache-config', config], { privateCacheDir: false });
  try {
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    assert.match(metrics, new RegExp(`deltaserve_cache_budget_bytes\\{tier="memory"\\} ${512 * 2 ** 20}\\n`));
    assert.match(metrics, new RegExp(`deltaserve_cache_budget_bytes\\{tier="disk"\\} ${2 * 2 ** 30}\\n`));
    assert.match(server.log(), new RegExp(`disk tier ${cacheDir}/[0-9a-f]{16}`));
  } finally {
    await server.stop();
  }
  const off = await startServer(['--cache-config', config, '--cache-disk-gb', '0']);
  try {
    assert.match(off.log(), /disk tier off/);
  } finally {
    await off.stop();
  }
  writeFileSync(config, JSON.stringify({ disk: { cap: 2 } }));
  await assert.rejects(startServer(['--cache-config', config]), /unknown key "disk\.cap"/);
});
