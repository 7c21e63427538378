// The disk tier seen from outside: a restart between two turns is a disk hit with the cold
// output, SIGKILL while writing never leaves a record that is restored damaged, flipped and
// truncated files are quarantined and the request is served cold, the cap holds, a read-only
// directory only turns the disk tier off and a full or vanished one only pauses its writes, and
// `deltaserve cache` reports and maintains the directory.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  mkdtempSync, readdirSync, statSync, existsSync, openSync, readSync, writeSync, closeSync,
  truncateSync, rmSync, chmodSync, mkdirSync, renameSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { binary, startServer } from './server.mjs';

const work = mkdtempSync(path.join(tmpdir(), 'deltaserve-disk-'));
let cold;

before(async () => {
  cold = await startServer(['--cache-ram', '0'], { embedded: true });
});

after(async () => {
  await cold.stop();
  rmSync(work, { recursive: true, force: true });
});

function words(seed, n) {
  const vocab = ['river', 'stone', 'garden', 'window', 'silver', 'market', 'bridge', 'candle',
    'forest', 'letter', 'harbor', 'planet', 'winter', 'copper', 'meadow', 'signal'];
  let x = seed;
  const out = [];
  for (let i = 0; i < n; ++i) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(vocab[x % vocab.length]);
  }
  return out.join(' ');
}

// A greedy chat request; returns the reply text, its top logprobs and the server's timings.
async function chat(server, messages, maxTokens = 8) {
  const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages, max_tokens: maxTokens, temperature: 0,
      logprobs: true, top_logprobs: 4 }),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return { text: body.choices[0].message.content, logprobs: body.choices[0].logprobs.content,
    timings: body.timings };
}

// A restored state computes the rest of the prompt in other chunks than a cold run, and the
// engine's results do not depend on how a prompt is split (state_equivalence_test): a reply from
// a restored state must be the cold reply, token for token and logprob for logprob.
function assertSameAsCold(reply, cold, what) {
  assert.deepEqual(reply.logprobs, cold.logprobs, what);
  assert.equal(reply.text, cold.text, what);
}

function modelDir(cacheDir) {
  const dirs = readdirSync(cacheDir).filter((d) => /^[0-9a-f]{16}$/.test(d));
  assert.equal(dirs.length, 1, `one model directory in ${cacheDir}`);
  return path.join(cacheDir, dirs[0]);
}

function records(cacheDir) {
  const dir = modelDir(cacheDir);
  return readdirSync(dir).filter((f) => f.endsWith('.rec')).map((f) => path.join(dir, f));
}

function cacheCommand(args) {
  return spawnSync(binary, ['cache', ...args], { encoding: 'utf8' });
}

async function waitForLog(server, pattern, ms = 10000) {
  const end = Date.now() + ms;
  while (!pattern.test(server.log())) {
    if (Date.now() > end) assert.fail(`log never matched ${pattern}:\n${server.log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const turn1 = [{ role: 'system', content: `You are terse. ${words(1, 300)}` },
  { role: 'user', content: `First question: ${words(2, 500)}` }];
// Turn 2 carries an assistant reply the servers did not write, so every server tokenises it the
// same way (a server's own reply would be reused as the ids it generated, which a cold server
// never saw).
function secondTurn(question) {
  return [...turn1, { role: 'assistant', content: 'Noted.' }, { role: 'user', content: question }];
}

// The 8-bit KV cache (and 4-bit V beside 8-bit K) is what the tiers store: its records serve a
// restarted server with the same setting and are smaller, and a server of another setting leaves
// them alone.
test('with --kv-quant 8 (--v-quant 4) the disk tier stores 8-bit KV (4-bit V), which servers of other settings do not restore', async () => {
  const q8Dir = path.join(work, 'kv-q8');
  const q4Dir = path.join(work, 'v-q4');
  const f32Dir = path.join(work, 'kv-f32');
  const bytes = (dir) => records(dir).reduce((sum, f) => sum + statSync(f).size, 0);
  const first = await startServer(['--cache-dir', q8Dir, '--kv-quant', '8'], { embedded: true });
  assert.match(first.log(), /K q8_0, V q8_0/);
  await chat(first, turn1);
  assert.equal(await first.stop(), 0);
  const plain = await startServer(['--cache-dir', f32Dir], { embedded: true });
  await chat(plain, turn1);
  assert.equal(await plain.stop(), 0);
  assert.ok(bytes(q8Dir) < bytes(f32Dir), `q8 ${bytes(q8Dir)} bytes, f32 ${bytes(f32Dir)} bytes`);

  const turn2 = secondTurn(`Second question: ${words(4, 60)}`);
  const again = await startServer(['--cache-dir', q8Dir, '--kv-quant', '8'], { embedded: true });
  const hit = await chat(again, turn2);
  assert.equal(hit.timings.cache_tier, 'disk', JSON.stringify(hit.timings));
  assert.ok(hit.timings.cached_tokens_by_tier.disk > 1000, JSON.stringify(hit.timings));
  assert.equal(await again.stop(), 0);

  const other = await startServer(['--cache-dir', q8Dir], { embedded: true });
  const miss = await chat(other, turn2);
  assert.equal(miss.timings.cached_tokens, 0, JSON.stringify(miss.timings));
  assert.equal(await other.stop(), 0);

  const fourBit = ['--kv-quant', '8', '--v-quant', '4'];
  const q4 = await startServer(['--cache-dir', q4Dir, ...fourBit], { embedded: true });
  assert.match(q4.log(), /K q8_0, V q4_0/);
  await chat(q4, turn1);
  assert.equal(await q4.stop(), 0);
  assert.ok(bytes(q4Dir) < bytes(q8Dir), `q4 V ${bytes(q4Dir)} bytes, q8 ${bytes(q8Dir)} bytes`);
  const q4Again = await startServer(['--cache-dir', q4Dir, ...fourBit], { embedded: true });
  const q4Hit = await chat(q4Again, turn2);
  assert.equal(q4Hit.timings.cache_tier, 'disk', JSON.stringify(q4Hit.timings));
  assert.equal(await q4Again.stop(), 0);
  const eightBit = await startServer(['--cache-dir', q4Dir, '--kv-quant', '8'], { embedded: true });
  const eightBitMiss = await chat(eightBit, turn2);
  assert.equal(eightBitMiss.timings.cached_tokens, 0, JSON.stringify(eightBitMiss.timings));
  assert.equal(await eightBit.stop(), 0);
});

test('a restart between turns: the second turn is a disk hit with the cold output', async () => {
  const cacheDir = path.join(work, 'restart');
  const first = await startServer(['--cache-dir', cacheDir], { embedded: true });
  await chat(first, turn1);
  assert.equal(await first.stop(), 0);
  assert.equal(statSync(cacheDir).mode & 0o777, 0o700);
  assert.equal(statSync(modelDir(cacheDir)).mode & 0o777, 0o700);
  for (const file of records(cacheDir)) assert.equal(statSync(file).mode & 0o777, 0o600, file);

  const turn2 = secondTurn(`Second question: ${words(3, 60)}`);
  const second = await startServer(['--cache-dir', cacheDir], { embedded: true });
  const hit = await chat(second, turn2);
  const reference = await chat(cold, turn2);
  assert.equal(hit.timings.cache_tier, 'disk', JSON.stringify(hit.timings));
  assert.ok(hit.timings.cached_tokens_by_tier.disk > 1000, JSON.stringify(hit.timings));
  assert.equal(hit.timings.cached_tokens_by_tier.memory, 0);
  assertSameAsCold(hit, reference, 'disk hit');
  assert.match(second.log(), /HIT\(disk\)/);
  const metrics = await (await fetch(`${second.baseUrl}/metrics`)).text();
  assert.match(metrics, new RegExp(`deltaserve_prompt_tokens_reused_total\\{tier="disk"\\} ${hit.timings.cached_tokens}\\n`));
  assert.match(metrics, /deltaserve_cache_bytes\{tier="disk"\} [1-9]/);
  assert.equal(await second.stop(), 0);

  const ls = cacheCommand(['ls', '--cache-dir', cacheDir]);
  assert.equal(ls.status, 0, ls.stderr);
  assert.match(ls.stdout, /conversation of \d+ tokens: \d+ snapshots/);
  assert.match(ls.stdout, /generation_end +at +\d+ +[\d.]+ MiB +\d+[smhd] ago/);
  const stat = cacheCommand(['stat', '--cache-dir', cacheDir]);
  assert.match(stat.stdout, new RegExp(`records +${records(cacheDir).length} `));
  const verify = cacheCommand(['verify', '--cache-dir', cacheDir]);
  assert.equal(verify.status, 0, verify.stdout);
  assert.match(verify.stdout, new RegExp(`verified ${records(cacheDir).length} records: 0 damaged`));
  const gc = cacheCommand(['gc', '--cache-dir', cacheDir, '--cache-disk-gb', '0.004']);
  assert.equal(gc.status, 0, gc.stderr);
  assert.match(gc.stdout, /[1-9]\d* evicted records/);
  const left = records(cacheDir).reduce((sum, f) => sum + statSync(f).size, 0);
  assert.ok(left <= 0.004 * 2 ** 30, `${left} bytes left`);
  assert.match(cacheCommand(['stat', '--cache-dir', cacheDir]).stdout, /unreachable +0 /);
  const clear = cacheCommand(['clear', '--cache-dir', cacheDir]);
  assert.equal(clear.status, 0);
  assert.equal(records(cacheDir).length, 0);
});

test('SIGKILL while writing never leaves a record that is restored damaged', async () => {
  const cacheDir = path.join(work, 'kill');
  const prompts = [];
  let killedMidWrite = 0;
  for (let round = 0; round < 6; ++round) {
    const server = await startServer(['--cache-dir', cacheDir], { embedded: true });
    // Every earlier prompt is served, from whatever survived, as a cold server serves it.
    for (const messages of prompts.slice(-2)) {
      const [again, reference] = [await chat(server, messages, 4), await chat(cold, messages, 4)];
      assertSameAsCold(again, reference, `round ${round}`);
    }
    const messages = [{ role: 'user', content: `Round ${round}: ${words(100 + round, 1000)}` }];
    prompts.push(messages);
    const requestsBefore = (server.log().match(/ uid=/g) ?? []).length;
    const pending = chat(server, messages, 32).catch(() => null);
    if (round % 2 === 0) {
      // Just as the reply ends: the writer is storing the prompt's blocks and snapshots.
      const end = Date.now() + 20000;
      while ((server.log().match(/ uid=/g) ?? []).length === requestsBefore && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 2));
      }
    } else {
      await new Promise((r) => setTimeout(r, 100 + ((round * 397) % 900)));
    }
    process.kill(server.pid, 'SIGKILL');
    await pending;
    await server.exited;
    const tmp = path.join(cacheDir, readdirSync(cacheDir)[0], 'tmp');
    if (existsSync(tmp) && readdirSync(tmp).length > 0) ++killedMidWrite;
    const verify = cacheCommand(['verify', '--dry-run', '--cache-dir', cacheDir]);
    assert.equal(verify.status, 0, `round ${round}: ${verify.stdout}`);
    const stat = cacheCommand(['stat', '--cache-dir', cacheDir]);
    assert.match(stat.stdout, /unreachable +0 /, `round ${round}: every record is reachable`);
  }
  console.log(`# ${killedMidWrite} of 6 kills left an interrupted write behind`);
  const server = await startServer(['--cache-dir', cacheDir], { embedded: true });
  assert.doesNotMatch(server.log(), /quarantined/);
  const tmp = path.join(modelDir(cacheDir), 'tmp');
  assert.deepEqual(readdirSync(tmp), [], 'interrupted writes are cleaned at start');
  assert.equal(await server.stop(), 0);
});

test('flipped bytes and truncated files are quarantined and the request is served cold', async () => {
  const cacheDir = path.join(work, 'damage');
  const first = await startServer(['--cache-dir', cacheDir], { embedded: true });
  await chat(first, turn1);
  assert.equal(await first.stop(), 0);
  const files = records(cacheDir).sort();
  assert.ok(files.length >= 6);
  files.forEach((file, i) => {
    if (i % 2 === 0) {
      const fd = openSync(file, 'r+');
      const size = statSync(file).size;
      const byte = Buffer.alloc(1);
      readSync(fd, byte, 0, 1, size - 100);
      byte[0] ^= 0x55;
      writeSync(fd, byte, 0, 1, size - 100);
      closeSync(fd);
    } else if (i % 3 === 0) {
      truncateSync(file, statSync(file).size - 1);
    }
  });
  const turn2 = secondTurn('And then?');
  const server = await startServer(['--cache-dir', cacheDir], { embedded: true });
  const served = await chat(server, turn2);
  const reference = await chat(cold, turn2);
  assertSameAsCold(served, reference, 'served past damaged records');
  await waitForLog(server, /quarantined/);
  const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
  assert.match(metrics, /deltaserve_disk_cache_quarantined_total [1-9]/);
  assert.equal(await server.stop(), 0);
  const quarantine = path.join(modelDir(cacheDir), 'quarantine');
  assert.ok(readdirSync(quarantine).length >= 1);
  // Payloads are checked when restored; verify checks the records no request touched.
  const verify = cacheCommand(['verify', '--cache-dir', cacheDir]);
  assert.equal(verify.status, 1, verify.stdout);
  assert.match(verify.stdout, /DAMAGED .*checksum mismatch/);
  const again = cacheCommand(['verify', '--cache-dir', cacheDir]);
  assert.equal(again.status, 0, `only sound records are left: ${again.stdout}`);
  const gc = cacheCommand(['gc', '--cache-dir', cacheDir]);
  assert.equal(gc.status, 0);
  assert.deepEqual(readdirSync(quarantine), []);
});

test('at the cap, eviction keeps the store under it', async () => {
  const cacheDir = path.join(work, 'cap');
  const capBytes = 0.006 * 2 ** 30;  // about a dozen KV blocks of the embedded model
  const server = await startServer(['--cache-dir', cacheDir, '--cache-disk-gb', '0.006'],
    { embedded: true });
  for (let i = 0; i < 6; ++i) {
    await chat(server, [{ role: 'user', content: `Topic ${i}: ${words(200 + i, 1200)}` }], 2);
    // The writer runs behind the replies; give it a moment, then measure.
    await new Promise((r) => setTimeout(r, 300));
    const used = records(cacheDir).reduce((sum, f) => sum + statSync(f).size, 0);
    assert.ok(used <= capBytes, `${used} bytes on disk after request ${i}, cap ${capBytes}`);
  }
  const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const evicted = [...metrics.matchAll(/deltaserve_cache_evictions_total\{reason="[a-z_]+",tier="disk"\} (\d+)/g)]
    .reduce((sum, m) => sum + Number(m[1]), 0);
  assert.ok(evicted > 0, metrics);
  assert.equal(await server.stop(), 0);
});

async function servesWithoutDisk(args, options = {}, pattern = /disk cache tier/) {
  const server = await startServer(args, { embedded: true, ...options });
  const reply = await chat(server, [{ role: 'user', content: words(7, 400) }]);
  const reference = await chat(cold, [{ role: 'user', content: words(7, 400) }]);
  assertSameAsCold(reply, reference, 'without the disk tier');
  await waitForLog(server, pattern);
  assert.equal(await server.stop(), 0);
  return server.log();
}

test('a read-only directory turns the disk tier off with a warning', async () => {
  // Root writes through permission bits; sysfs refuses everyone.
  let readOnly = '/sys/deltaserve-cache';
  if (process.getuid() !== 0) {
    readOnly = path.join(work, 'readonly');
    mkdirSync(readOnly);
    chmodSync(readOnly, 0o500);
  }
  const log = await servesWithoutDisk(['--cache-dir', readOnly]);
  assert.match(log, /disk cache tier off, serving goes on with the memory tier: cannot create/);
});

test('a full disk pauses disk writes with a warning and serving goes on', async () => {
  const cacheDir = path.join(work, 'full');
  // A file-size limit below one KV block record: every record write fails as on a full disk.
  const log = await servesWithoutDisk(['--cache-dir', cacheDir], { prlimitFsize: 100000 },
    /writing paused/);
  assert.match(log, /disk cache tier: writing paused for 30 s, writes until then are dropped and serving goes on with the memory tier: .*File too large/);
});

test('a directory that vanishes while serving pauses disk writes, not serving', async () => {
  const cacheDir = path.join(work, 'vanish');
  const server = await startServer(['--cache-dir', cacheDir], { embedded: true });
  try {
    await chat(server, [{ role: 'user', content: words(8, 400) }]);
    // Moved away in one step (the writer may be adding files), then deleted.
    renameSync(cacheDir, `${cacheDir}.gone`);
    rmSync(`${cacheDir}.gone`, { recursive: true, force: true, maxRetries: 20 });
    const messages = [{ role: 'user', content: words(9, 400) }];
    const [reply, reference] = [await chat(server, messages), await chat(cold, messages)];
    assertSameAsCold(reply, reference, 'after the directory vanished');
    await waitForLog(server, /writing paused/);
    assert.equal(existsSync(cacheDir), false);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});
