#!/usr/bin/env node
// Cold vs warm time to first token for a repeated prompt, from the memory tier and from the disk
// tier after a restart, and the disk tier's restore throughput next to the sequential read
// throughput of the same directory, measured in the same run.
//
// Each size gets a prompt of pseudo-random token ids below 400 (any vocabulary here has them;
// /v1/completions takes ids, so sizes are exact):
//   cold    first request: nothing can be reused;
//   memory  the same request again on the same server;
//   disk    the same request after the server restarted (its memory is empty).
// Before the disk requests and before the sequential read the page cache is dropped when this
// process may (root), so both read the device; the output says whether it could.
//
// usage: node tools/disk-cache-benchmark.mjs --model bench.gguf [--sizes 1024,4096]
//            [--cache-dir DIR] [--threads 2] [--json out.json]
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, readdirSync, openSync, readSync, closeSync, statSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function parseArgs(argv) {
  const args = { binary: path.join(repoRoot, 'build/src/apps/deltaserve'), model: null,
    sizes: [1024, 4096, 16384, 32768], cacheDir: null, threads: 2, json: null };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--model') args.model = argv[++i];
    else if (a === '--binary') args.binary = argv[++i];
    else if (a === '--sizes') args.sizes = argv[++i].split(',').map(Number);
    else if (a === '--cache-dir') args.cacheDir = argv[++i];
    else if (a === '--threads') args.threads = Number(argv[++i]);
    else if (a === '--json') args.json = argv[++i];
    else throw new Error(`unknown option ${a}`);
  }
  if (!args.model) throw new Error('--model is required');
  return args;
}

async function startServer(args, cacheDir) {
  const ctx = Math.max(...args.sizes) + 64;
  const child = spawn(args.binary, ['serve', '-m', args.model, '--port', '0', '--threads',
    String(args.threads), '--ctx-size', String(ctx), '--cache-dir', cacheDir,
    '--prefill-chunk', '512'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const port = await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const match = /listening on http:\/\/[^:]+:(\d+)/.exec(log);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${log}`)));
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return { url: `http://127.0.0.1:${port}`, stop: () => { child.kill('SIGTERM'); return exited; } };
}

// node:http rather than fetch, whose five-minute header timeout a long cold prefill outlasts.
function complete(server, ids) {
  const payload = JSON.stringify({ model: 'm', prompt: ids, max_tokens: 1, temperature: 0 });
  return new Promise((resolve, reject) => {
    const request = http.request(`${server.url}/v1/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, timeout: 0,
    }, (response) => {
      let text = '';
      response.on('data', (chunk) => { text += chunk; });
      response.on('end', () => {
        if (response.statusCode !== 200) reject(new Error(text));
        else resolve(JSON.parse(text).timings);
      });
    });
    request.on('error', reject);
    request.end(payload);
  });
}

async function metric(server, name) {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
}

function dropPageCache() {
  try {
    writeFileSync('/proc/sys/vm/drop_caches', '3');
    return true;
  } catch {
    return false;
  }
}

// Reads every record file of the directory once, in 8 MiB reads; returns GB/s.
function sequentialReadGBps(dir) {
  const buffer = Buffer.alloc(8 << 20);
  let bytes = 0;
  const start = performance.now();
  for (const sub of readdirSync(dir)) {
    const modelDir = path.join(dir, sub);
    if (!statSync(modelDir).isDirectory()) continue;
    for (const name of readdirSync(modelDir).filter((f) => f.endsWith('.rec'))) {
      const fd = openSync(path.join(modelDir, name), 'r');
      for (let n; (n = readSync(fd, buffer, 0, buffer.length, null)) > 0;) bytes += n;
      closeSync(fd);
    }
  }
  return { bytes, gbps: bytes / 1e9 / ((performance.now() - start) / 1000) };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const cacheDir = args.cacheDir ?? mkdtempSync(path.join(tmpdir(), 'deltaserve-disk-bench-'));
  const prompts = args.sizes.map((n, s) =>
    Array.from({ length: n }, (_, i) => 1 + ((i * 7919 + s * 104729 + 13) % 400)));
  const rows = args.sizes.map((size) => ({ size }));

  let server = await startServer(args, cacheDir);
  for (const [i, ids] of prompts.entries()) {
    const cold = await complete(server, ids);
    const warm = await complete(server, ids);
    Object.assign(rows[i], { coldTtftS: cold.ttft_ms / 1000, coldComputed: cold.prompt_tokens_computed,
      memoryTtftS: warm.ttft_ms / 1000, memoryCached: warm.cached_tokens_by_tier.memory,
      memoryRestoreS: warm.restore_ms / 1000 });
    console.error(`${ids.length}: cold ${rows[i].coldTtftS.toFixed(2)} s, memory ${rows[i].memoryTtftS.toFixed(3)} s`);
  }
  await server.stop();  // writes everything queued first

  const coldRestore = dropPageCache();
  server = await startServer(args, cacheDir);
  for (const [i, ids] of prompts.entries()) {
    const before = await metric(server, 'deltaserve_disk_cache_bytes_read_total');
    const disk = await complete(server, ids);
    const bytes = (await metric(server, 'deltaserve_disk_cache_bytes_read_total')) - before;
    Object.assign(rows[i], { diskTtftS: disk.ttft_ms / 1000, diskTier: disk.cache_tier,
      diskCached: disk.cached_tokens_by_tier.disk, diskRestoreS: disk.restore_ms / 1000,
      diskBytes: bytes, restoreGBps: bytes / 1e9 / (disk.restore_ms / 1000) });
    console.error(`${ids.length}: disk ${rows[i].diskTtftS.toFixed(3)} s, ${rows[i].restoreGBps.toFixed(2)} GB/s`);
  }
  await server.stop();
  const coldRead = dropPageCache();
  const sequential = sequentialReadGBps(cacheDir);

  console.log(`| prompt tokens | cold TTFT s | memory tier: TTFT s (cached) | disk tier after restart: TTFT s (cached) | disk restore GB/s |`);
  console.log('|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(`| ${r.size} | ${r.coldTtftS.toFixed(2)} | ${r.memoryTtftS.toFixed(3)} (${r.memoryCached}) | ` +
      `${r.diskTtftS.toFixed(3)} (${r.diskCached}, ${r.diskTier}) | ${r.restoreGBps.toFixed(2)} |`);
  }
  console.log(`\nsequential read of the same directory: ${sequential.gbps.toFixed(2)} GB/s over ` +
    `${(sequential.bytes / 1e9).toFixed(2)} GB; page cache dropped before the disk restores: ` +
    `${coldRestore ? 'yes' : 'no'}, before the sequential read: ${coldRead ? 'yes' : 'no'}`);
  if (args.json) writeFileSync(args.json, JSON.stringify({ rows, sequential, coldRestore, coldRead }, null, 2));
  if (!args.cacheDir) rmSync(cacheDir, { recursive: true, force: true });
}

main().catch((error) => {
  console.error(`disk-cache-benchmark: ${error.message}`);
  process.exit(1);
});
