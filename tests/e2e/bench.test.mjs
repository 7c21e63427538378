// `deltaserve bench` against real servers on the embedded model: every mode writes JSON, CSV and
// SVG charts with the expected series, the numbers agree with what the servers report, --vs pairs
// two servers, and bad input fails with a clear message. Against fake servers that fail on
// purpose: failures name their phase, keep what was measured and fail the command.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { binary, startServer } from './server.mjs';
import { promptWords, startFakeServer } from './fake-openai.mjs';

let cached;
let uncached;
const work = mkdtempSync(path.join(tmpdir(), 'deltaserve-bench-'));

before(async () => {
  cached = await startServer(['--ctx-size', '8192'], { embedded: true });
  uncached = await startServer(['--ctx-size', '8192', '--cache-ram', '0'], { embedded: true });
});

after(async () => {
  assert.equal(await cached.stop(), 0, cached.log());
  assert.equal(await uncached.stop(), 0, uncached.log());
});

function bench(args) {
  return new Promise((resolve) => {
    const child = spawn(binary, ['bench', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function benchOk(args) {
  const result = await bench(args);
  assert.equal(result.code, 0, `bench ${args.join(' ')}\n${result.stderr}`);
  return result;
}

function readJson(dir, mode) {
  return JSON.parse(readFileSync(path.join(dir, `${mode}.json`), 'utf8'));
}

// The CSV as objects keyed by its header.
function readCsv(dir, mode) {
  const [header, ...lines] = readFileSync(path.join(dir, `${mode}.csv`), 'utf8').trim().split('\n');
  const columns = header.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((v, i) => [columns[i], v])));
}

// Validates the SVG as XML and returns its panels, each {series name: [[x, y], ...]}.
function readPanels(dir, stem) {
  const text = readFileSync(path.join(dir, `${stem}.svg`), 'utf8');
  assert.equal(XMLValidator.validate(text), true, `${stem}.svg is not well-formed XML`);
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(text);
  assert.equal(doc.svg.xmlns, 'http://www.w3.org/2000/svg');
  return [doc.svg.g].flat().map((panel) => {
    const series = {};
    for (const g of [panel.g].flat()) {
      const circles = g.circle === undefined ? [] : [g.circle].flat();
      series[g['data-series']] = circles.map((c) => [Number(c['data-x']), Number(c['data-y'])]);
    }
    return series;
  });
}

// The chart's note (the line under its title), or undefined.
function readNote(dir, stem) {
  const text = readFileSync(path.join(dir, `${stem}.svg`), 'utf8');
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(text);
  return [doc.svg.text].flat().find((t) => t.class === 'note')?.['#text'];
}

// The series of a one-panel chart, or of the first panel.
function readChart(dir, stem) {
  return readPanels(dir, stem)[0];
}

test('sweep measures prefill and decode per size with unique prompts and charts them', async () => {
  const out = path.join(work, 'sweep');
  const result = await benchOk(['sweep', '--url', cached.baseUrl, '--sizes', '128,512',
    '--decode-tokens', '8', '--label', 'ds', '-o', out]);
  assert.match(result.stderr, /\[1\/2\] sweep: 128 tokens on ds: /);
  assert.match(result.stderr, /\[2\/2\] sweep: 512 tokens on ds: /);
  const { rows } = readJson(out, 'sweep');
  assert.equal(rows.length, 2);
  for (const [i, target] of [128, 512].entries()) {
    const row = rows[i];
    assert.equal(row.error, '');
    assert.ok(Math.abs(row.prompt_tokens - target) <= target * 0.25, JSON.stringify(row));
    assert.equal(row.cached_tokens, 0, 'a unique prompt must not hit the cache');
    assert.equal(row.computed_tokens, row.prompt_tokens);
    assert.equal(row.decode_tokens, 8, 'ignore_eos makes every reply the requested length');
    assert.ok(row.prefill_tok_s > 0 && row.decode_tok_s > 0);
    assert.ok(Math.abs(row.prefill_tok_s - row.computed_tokens / row.ttft_s) < 1e-6 * row.prefill_tok_s);
    assert.ok(Math.abs(row.decode_tok_s - 7 / row.decode_s) < 1e-6 * row.decode_tok_s);
  }
  const csv = readCsv(out, 'sweep');
  assert.deepEqual(csv.map((r) => Number(r.prompt_tokens)), rows.map((r) => r.prompt_tokens));
  // Chart values carry 6 significant digits.
  const close = (a, b) => Math.abs(a - b) <= 1e-5 * Math.abs(b);
  const [prefill, decode] = readPanels(out, 'sweep-throughput');
  prefill.ds.forEach(([, y], i) => assert.ok(close(y, rows[i].prefill_tok_s), `${y} vs ${rows[i].prefill_tok_s}`));
  assert.deepEqual(decode.ds.map(([x]) => x), rows.map((r) => r.prompt_tokens));
  assert.equal(readNote(out, 'sweep-throughput'), undefined);
  const versus = readChart(out, 'sweep-decode-vs-wall');
  assert.deepEqual(Object.keys(versus).sort(), ['decode tok/s, ds', 'total tokens / wall s, ds']);
  assert.deepEqual(versus['decode tok/s, ds'].map(([x]) => x), rows.map((r) => r.prompt_tokens));
  versus['decode tok/s, ds'].forEach(([, y], i) =>
    assert.ok(close(y, rows[i].decode_tok_s), `${y} vs ${rows[i].decode_tok_s}`));
});

test('compare serves the repeated prompt from the cache but for its last token', async () => {
  const out = path.join(work, 'compare');
  const result = await benchOk(['compare', '--url', cached.baseUrl, '--sizes', '256,1k', '--label',
    'ds', '-o', out]);
  const { rows, summary } = readJson(out, 'compare');
  assert.deepEqual(rows.map((r) => r.run), ['cold', 'warm', 'cold', 'warm']);
  for (let i = 0; i < rows.length; i += 2) {
    const [cold, warm] = [rows[i], rows[i + 1]];
    assert.equal(cold.cached_tokens, 0);
    assert.equal(warm.prompt_tokens, cold.prompt_tokens);
    assert.equal(warm.computed_tokens, 1, JSON.stringify(warm));
    // Regression: 1 computed token over the warm TTFT was shown as a prefill rate.
    assert.ok(cold.prefill_tok_s > 0);
    assert.equal(warm.prefill_tok_s, null, 'a warm row computes too little to rate prefill');
    // The speedup is a measured ratio, not asserted faster: on a busy machine a 256-token cold
    // prefill of the test model can take less time than one warm request's overhead.
    assert.ok(Math.abs(warm.ttft_speedup - cold.ttft_s / warm.ttft_s) < 1e-6 * warm.ttft_speedup,
      JSON.stringify(warm));
  }
  const unrated = 'prefill_tok_s is blank in 2 rows that computed fewer than 64 prompt tokens: ' +
    "their TTFT is the request's overhead, not prefill";
  assert.deepEqual(summary.notes, [unrated]);
  assert.ok(result.stdout.includes(`Note: ${unrated}`), result.stdout);
  assert.match(result.stderr, /warm on ds: .*prefill not rated \(1 computed, under 64\)/);
  const chart = readChart(out, 'compare-prefill');
  assert.deepEqual(Object.keys(chart).sort(),
    ['cache off: cold prompt, ds', 'cache on: repeated prompt, ds']);
  assert.equal(chart['cache on: repeated prompt, ds'].length, 2);
});

// A three-turn agent session in each API, growing by a user message per turn.
function writeTraces() {
  const system = 'You are a coding agent. Use the tools to answer. '.repeat(20);
  const chat = [];
  const messages = [{ role: 'system', content: system }];
  const anthropic = [];
  const anthropicMessages = [];
  for (let turn = 1; turn <= 3; ++turn) {
    const ask = `Step ${turn}: read file number ${turn} and summarise it. ` + 'context '.repeat(40);
    messages.push({ role: 'user', content: ask });
    chat.push({ turn, seq: turn, method: 'POST', path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: { model: 'recorded', messages: [...messages], stream: true, max_tokens: 4096 } });
    messages.push({ role: 'assistant', content: `Step ${turn} is done.` });
    anthropicMessages.push({ role: 'user', content: [{ type: 'text', text: ask }] });
    anthropic.push({ turn, seq: turn, method: 'POST', path: '/v1/messages?beta=true',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: { model: 'recorded', system, messages: [...anthropicMessages], stream: true,
        max_tokens: 32000 } });
    anthropicMessages.push({ role: 'assistant', content: [{ type: 'text', text: `Step ${turn} is done.` }] });
  }
  const files = [path.join(work, 'chat-session.jsonl'), path.join(work, 'messages-session.jsonl')];
  writeFileSync(files[0], chat.map((r) => JSON.stringify(r)).join('\n') + '\n');
  writeFileSync(files[1], anthropic.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return files;
}

test('replay plays both APIs turn by turn against two servers and reports per turn', async () => {
  const out = path.join(work, 'replay');
  const traces = writeTraces();
  const result = await benchOk(['replay', ...traces, '--interleave', '--url', cached.baseUrl,
    '--label', 'cache', '--vs', uncached.baseUrl, '--vs-label', 'nocache', '-o', out]);
  assert.match(result.stdout, /Ratios cache \/ nocache:/);
  const { rows, summary } = readJson(out, 'replay');
  assert.equal(rows.length, 12);
  assert.deepEqual(rows.slice(0, 4).map((r) => [r.session, r.turn, r.server]), [
    ['chat-session', 1, 'cache'], ['chat-session', 1, 'nocache'],
    ['messages-session', 1, 'cache'], ['messages-session', 1, 'nocache']]);
  for (const row of rows) {
    assert.equal(row.error, '', JSON.stringify(row));
    assert.ok(row.decode_tokens <= 16, 'max_tokens is capped');
    if (row.server === 'nocache') assert.equal(row.cached_tokens, 0);
    if (row.server === 'cache' && row.turn > 1) {
      assert.ok(row.computed_tokens <= row.new_tokens + 64, JSON.stringify(row));
    }
  }
  for (const session of ['chat-session', 'messages-session']) {
    const turns = rows.filter((r) => r.session === session && r.server === 'cache');
    assert.deepEqual(turns.map((r) => r.new_tokens),
      turns.map((r, i) => r.prompt_tokens - (i ? turns[i - 1].prompt_tokens : 0)));
    assert.equal(summary.cache[session].later_turns_computed_at_most_new_plus_64, 2);
    assert.equal(summary.nocache[session].prompt_share_from_cache, 0);
  }
  const chart = readChart(out, 'replay-ttft');
  assert.deepEqual(Object.keys(chart).sort(), ['chat-session, cache', 'chat-session, nocache',
    'messages-session, cache', 'messages-session, nocache']);
  assert.deepEqual(chart['chat-session, cache'].map(([x]) => x), [1, 2, 3]);
});

test('concurrency runs N clients at once and reports per level', async () => {
  const out = path.join(work, 'concurrency');
  await benchOk(['concurrency', '--url', cached.baseUrl, '--label', 'ds', '--clients', '1,2',
    '--requests', '2', '--prompt-tokens', '128', '--decode-tokens', '8', '-o', out]);
  const { rows } = readJson(out, 'concurrency');
  assert.deepEqual(rows.map((r) => [r.clients, r.requests, r.failed]), [[1, 2, 0], [2, 4, 0]]);
  for (const row of rows) {
    assert.equal(row.generated_tokens, row.requests * 8);
    assert.ok(Math.abs(row.generated_tokens_per_wall_s - row.generated_tokens / row.wall_s) < 1e-6 * row.generated_tokens_per_wall_s);
    assert.ok(row.ttft_p95_s >= row.ttft_p50_s);
  }
  const chart = readChart(out, 'concurrency-throughput');
  assert.deepEqual(Object.keys(chart).sort(), ['decode tok/s per request, ds',
    'generated tokens / wall s, all clients, ds', 'total tokens / wall s, ds']);
  assert.deepEqual(chart['decode tok/s per request, ds'].map(([x]) => x), [1, 2]);
});

test('sweep --vs alternates two servers and prints ratios', async () => {
  const out = path.join(work, 'vs');
  const result = await benchOk(['sweep', '--url', cached.baseUrl, '--label', 'a', '--vs',
    uncached.baseUrl, '--vs-label', 'b', '--sizes', '128,256', '--decode-tokens', '4', '-o', out]);
  const { rows } = readJson(out, 'sweep');
  assert.deepEqual(rows.map((r) => [r.target_tokens, r.server]),
    [[128, 'a'], [128, 'b'], [256, 'a'], [256, 'b']]);
  const ratioLines = result.stdout.split('\n').filter((l) => /^\| (128|256) \| 0 \|/.test(l));
  assert.equal(ratioLines.length, 2, result.stdout);
  const [, , , ttftRatio] = ratioLines[0].split('|').map((c) => c.trim());
  assert.ok(Math.abs(Number(ttftRatio) - rows[0].ttft_s / rows[1].ttft_s) < 1e-3 * Number(ttftRatio));
  for (const panel of readPanels(out, 'sweep-throughput')) {
    assert.deepEqual(Object.keys(panel), ['a', 'b']);
  }
});

test('bad input fails with one clear message and no files', async () => {
  const out = path.join(work, 'bad');
  const badSize = await bench(['sweep', '--url', cached.baseUrl, '--sizes', '12x', '-o', out]);
  assert.equal(badSize.code, 1);
  assert.match(badSize.stderr, /bad size "12x"/);
  const badUrl = await bench(['sweep', '--url', 'ftp://x', '-o', out]);
  assert.match(badUrl.stderr, /must start with http:\/\/ or https:\/\//);
  const noModels = await bench(['sweep', '--url', 'http://127.0.0.1:1', '-o', out]);
  assert.equal(noModels.code, 1);
  assert.match(noModels.stderr, /deltaserve bench: finding the model: GET http:\/\/127\.0\.0\.1:1\/v1\/models failed/);
  const garbage = path.join(work, 'garbage.jsonl');
  writeFileSync(garbage, '{"not": "a record"}\n');
  const badTrace = await bench(['replay', garbage, '--url', cached.baseUrl, '-o', out]);
  assert.equal(badTrace.code, 1);
  assert.match(badTrace.stderr, /garbage\.jsonl:1: not a trace record/);
  assert.equal(existsSync(out), false);
  const tooLong = await bench(['sweep', '--url', cached.baseUrl, '--sizes', '16k', '-o', out]);
  assert.equal(tooLong.code, 2, 'every request failed');
  assert.match(tooLong.stderr, /FAILED after [0-9.]+ s \(no token streamed\): POST .*HTTP 400/);
  const [failed] = readJson(out, 'sweep').rows;
  assert.equal(failed.prompt_tokens, null);
  assert.equal(failed.failed_in, 'request');
  assert.ok(failed.wall_s >= 0, 'a failed row keeps its elapsed time');
});

// Regression: a failed calibration exited with the server's message alone and wrote nothing.
test('a failed calibration names its phase, keeps what it measured and fails the command', async () => {
  const fake = await startFakeServer((body, i) =>
    (i === 1 ? { status: 500, message: 'out of slots' } : { tokens: 1 }));
  const out = path.join(work, 'calibration');
  const result = await bench(['sweep', '--url', fake.baseUrl, '--label', 'fake', '--sizes', '128,256',
    '-o', out]);
  await fake.close();
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /sweep: calibration on fake: FAILED, none of its rows will be sent: POST .*HTTP 500: .*out of slots/);
  assert.match(result.stderr, /deltaserve bench: 2 of 2 rows failed; the first, row 1 of sweep \(server fake, target_tokens 128, repeat 0\), failed in calibration: calibration failed: POST .*HTTP 500/);
  assert.equal(fake.bodies.length, 2, 'no row is sent to a server that could not be calibrated');
  const { rows, summary } = readJson(out, 'sweep');
  assert.deepEqual(rows.map((r) => [r.target_tokens, r.failed_in, r.wall_s]),
    [[128, 'calibration', null], [256, 'calibration', null]]);
  assert.match(rows[0].error, /^calibration failed: POST .*out of slots/);
  assert.equal(summary.failed_rows, 2);
  assert.deepEqual(summary.first_failure, { row: 1, server: 'fake', failed_in: 'calibration',
    error: rows[0].error });
  const [probe, failedProbe] = summary.calibration.fake.probes;
  assert.equal(probe.prompt_tokens, promptWords(fake.bodies[0]), 'the probe that ran is kept');
  assert.equal(failedProbe.failed_in, 'request');
  assert.match(failedProbe.error, /HTTP 500/);
  assert.match(readFileSync(path.join(out, 'sweep.csv'), 'utf8'), /,failed_in,error\n/);
  // Regression: every row failed and the charts came out empty without a word.
  const noRow = `no row succeeded: ${rows[0].error}`;
  assert.deepEqual(summary.notes, [noRow]);
  assert.ok(result.stdout.includes(`Note: ${noRow}`), result.stdout);
  for (const stem of ['sweep-throughput', 'sweep-decode-vs-wall']) {
    for (const panel of readPanels(out, stem)) {
      assert.ok(Object.values(panel).every((points) => points.length === 0));
    }
    assert.match(readNote(out, stem), /^no row succeeded: calibration failed: POST .*HTTP 500/);
  }

  const unreachable = await bench(['sweep', '--url', 'http://127.0.0.1:1', '--model', 'm',
    '--sizes', '128', '-o', path.join(work, 'unreachable')]);
  assert.equal(unreachable.code, 2);
  assert.match(unreachable.stderr, /failed in calibration: calibration failed: POST http:\/\/127\.0\.0\.1:1\/v1\/chat\/completions failed/);
});

// Regression: with --vs, failed rows were only errors in their rows and the command exited 0.
test('sweep --vs marks failed rows with their phase, keeps partial timings and exits 2', async () => {
  const healthy = await startFakeServer(() => ({ tokens: 4 }));
  // Calibration probes are 64 and 320 words; longer prompts are cut short or refused.
  const failing = await startFakeServer((body) => {
    const words = promptWords(body);
    if (words <= 400) return { tokens: 4 };
    if (words <= 1500) return { tokens: 3, cut: true };
    return { status: 400, message: 'prompt is longer than the context' };
  });
  const out = path.join(work, 'vs-failing');
  const result = await bench(['sweep', '--url', healthy.baseUrl, '--label', 'a', '--vs',
    failing.baseUrl, '--vs-label', 'b', '--sizes', '128,1k,2k', '--decode-tokens', '4', '-o', out]);
  await healthy.close();
  await failing.close();
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stdout, /Ratios a \/ b:/);
  assert.match(result.stderr, /deltaserve bench: 2 of 6 rows failed; the first, row 4 of sweep \(server b, target_tokens 1024, repeat 0\), failed in its request: /);
  const { rows, summary } = readJson(out, 'sweep');
  assert.deepEqual(rows.map((r) => [r.server, r.target_tokens, r.failed_in]), [
    ['a', 128, ''], ['b', 128, ''], ['a', 1024, ''], ['b', 1024, 'request'],
    ['a', 2048, ''], ['b', 2048, 'request']]);
  assert.equal(summary.failed_rows, 2);
  const cut = rows[3];
  assert.ok(cut.ttft_s > 0, `a row cut short keeps its TTFT: ${JSON.stringify(cut)}`);
  assert.equal(cut.decode_tokens, 3, 'and the tokens it streamed');
  assert.ok(cut.wall_s >= cut.ttft_s, 'and its elapsed time');
  assert.equal(cut.prompt_tokens, null);
  assert.match(cut.error, /failed: the connection broke during the response/);
  assert.match(rows[5].error, /HTTP 400: .*longer than the context/);
  assert.equal(rows[5].ttft_s, null);
  const [prefill] = readPanels(out, 'sweep-throughput');
  assert.deepEqual(prefill.b.map(([x]) => x), [rows[1].prompt_tokens], 'failed rows are not drawn');
  assert.match(readNote(out, 'sweep-throughput'), /^2 of 6 rows failed and are not drawn; the first: POST/);
  assert.deepEqual(summary.notes, []);
});

test('--extra-body is merged into every request body; bad JSON is a clear error', async () => {
  const fake = await startFakeServer(() => ({ tokens: 2 }));
  const out = path.join(work, 'extra-body');
  const extra = '{"logit_bias":{"42":-100},"stream_options":{"x":1},"ignore_eos":null}';
  await benchOk(['sweep', '--url', fake.baseUrl, '--sizes', '128', '--decode-tokens', '2',
    '--extra-body', extra, '-o', out]);
  assert.equal(fake.bodies.length, 3, 'two calibration probes and the row');
  for (const body of fake.bodies) {
    assert.deepEqual(body.logit_bias, { 42: -100 });
    assert.deepEqual(body.stream_options, { include_usage: true, x: 1 }, 'objects merge deeply');
    assert.equal('ignore_eos' in body, false, 'null removes a field');
    assert.equal(body.max_tokens > 0 && body.model === 'fake-model', true);
  }
  const file = path.join(work, 'extra-body.json');
  writeFileSync(file, '{"top_k": 1}');
  await benchOk(['sweep', '--url', fake.baseUrl, '--sizes', '128', '--decode-tokens', '2',
    '--extra-body-file', file, '-o', out]);
  assert.equal(fake.bodies.at(-1).top_k, 1);
  const sent = fake.bodies.length;

  const badJson = await bench(['sweep', '--url', fake.baseUrl, '--extra-body', '{"top_k": ', '-o', out]);
  assert.equal(badJson.code, 1);
  assert.match(badJson.stderr, /^deltaserve bench: --extra-body: not valid JSON: /);
  const notObject = await bench(['sweep', '--url', fake.baseUrl, '--extra-body', '[1]', '-o', out]);
  assert.equal(notObject.code, 1);
  assert.match(notObject.stderr, /--extra-body: must be a JSON object, .* not array/);
  writeFileSync(file, '"text"');
  const badFile = await bench(['sweep', '--url', fake.baseUrl, '--extra-body-file', file, '-o', out]);
  assert.equal(badFile.code, 1);
  assert.match(badFile.stderr, /--extra-body-file .*extra-body\.json: must be a JSON object/);
  const both = await bench(['sweep', '--url', fake.baseUrl, '--extra-body', '{}',
    '--extra-body-file', file, '-o', out]);
  assert.notEqual(both.code, 0);
  assert.match(both.stderr, /excludes/);
  await fake.close();
  assert.equal(fake.bodies.length, sent, 'a bad --extra-body sends nothing');
});
