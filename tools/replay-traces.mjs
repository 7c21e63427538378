#!/usr/bin/env node
// Replays recorded agent sessions (../shared/traces format: one JSON request per line) against a
// running server, body by body as recorded, and reports per turn what the prefix cache did:
// prompt tokens, cached, computed, new (prompt tokens added since the previous request of the
// same session) and time to first token. Several traces given with --interleave are sent turn by
// turn in alternation, as two conversations sharing one server.
//
// The one change to each body is max_tokens, capped (--max-tokens, default 16): the replies do
// not matter, since every later body carries the recorded assistant turns, and a model with
// random weights would otherwise write until the cap the client asked for.
//
// usage: node tools/replay-traces.mjs --url http://127.0.0.1:8080 [--interleave]
//            [--max-tokens 16] [--json out.json] trace.jsonl...
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const kSlack = 64;  // the goal: computed <= new + kSlack on every turn after the first

function parseArgs(argv) {
  const args = { url: 'http://127.0.0.1:8080', maxTokens: 16, interleave: false, json: null, traces: [] };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--url') args.url = argv[++i];
    else if (a === '--max-tokens') args.maxTokens = Number(argv[++i]);
    else if (a === '--interleave') args.interleave = true;
    else if (a === '--json') args.json = argv[++i];
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else args.traces.push(a);
  }
  if (args.traces.length === 0) throw new Error('no trace files given');
  return args;
}

// Reads an SSE response to its end; returns the usage and timings the server reported and the
// client-side time to the first generated text.
async function readStream(response, start) {
  const decoder = new TextDecoder();
  let buffer = '';
  let usage = {};
  let timings = null;
  let firstTokenMs = null;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = frame.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('');
      if (!data || data === '[DONE]') continue;
      const event = JSON.parse(data);
      if (event.type === 'error' || event.error) throw new Error(`server error: ${data}`);
      const text = event.delta?.text ?? event.delta?.thinking ?? event.delta?.partial_json ??
        event.choices?.[0]?.delta?.content ?? event.choices?.[0]?.delta?.reasoning_content ??
        event.choices?.[0]?.delta?.tool_calls;
      if (text && firstTokenMs === null) firstTokenMs = performance.now() - start;
      const u = event.message?.usage ?? event.usage;
      if (u) usage = { ...usage, ...u };
      if (event.timings) timings = event.timings;
    }
  }
  return { usage, timings, firstTokenMs };
}

async function send(url, record, maxTokens) {
  const body = { ...record.body, max_tokens: Math.min(record.body.max_tokens ?? maxTokens, maxTokens) };
  const headers = { ...record.headers, 'content-type': 'application/json' };
  const start = performance.now();
  const response = await fetch(url + record.path, { method: record.method, headers, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`turn ${record.turn}: HTTP ${response.status}: ${await response.text()}`);
  const { usage, timings, firstTokenMs } = await readStream(response, start);
  if (!timings) throw new Error(`turn ${record.turn}: the server reported no timings`);
  return {
    prompt: timings.cached_tokens + timings.prompt_tokens_computed,
    cached: timings.cached_tokens,
    computed: timings.prompt_tokens_computed,
    ttftMs: timings.ttft_ms,
    clientTtftMs: firstTokenMs,
    prefillTokPerS: timings.prefill_tokens_per_s,
    usage,
  };
}

function summarize(rows) {
  const later = rows.filter((r) => r.turn > 1);
  const sum = (xs, f) => xs.reduce((s, x) => s + f(x), 0);
  const reusable = sum(later, (r) => r.prompt - r.new);
  return {
    turns: rows.length,
    turnsMeetingGoal: later.filter((r) => r.computed <= r.new + kSlack).length,
    laterTurns: later.length,
    reusableServedShare: reusable > 0 ? Math.min(sum(later, (r) => r.cached), reusable) / reusable : 1,
    promptServedShare: sum(rows, (r) => r.cached) / sum(rows, (r) => r.prompt),
    promptTokens: sum(rows, (r) => r.prompt),
    cachedTokens: sum(rows, (r) => r.cached),
    computedTokens: sum(rows, (r) => r.computed),
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const sessions = args.traces.map((file) => ({
    name: path.basename(file, '.jsonl'),
    records: readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)),
    previousPrompt: 0,
  }));
  const order = [];
  if (args.interleave) {
    const longest = Math.max(...sessions.map((s) => s.records.length));
    for (let i = 0; i < longest; ++i) {
      for (const s of sessions) if (i < s.records.length) order.push([s, s.records[i]]);
    }
  } else {
    for (const s of sessions) for (const r of s.records) order.push([s, r]);
  }
  const rows = [];
  console.log('| session | turn | prompt | cached | computed | new | TTFT s | goal |');
  console.log('|---|---:|---:|---:|---:|---:|---:|:-:|');
  for (const [session, record] of order) {
    const result = await send(args.url, record, args.maxTokens);
    const row = { session: session.name, turn: record.turn, ...result, new: result.prompt - session.previousPrompt };
    session.previousPrompt = result.prompt;
    rows.push(row);
    const goal = row.turn === 1 ? '' : row.computed <= row.new + kSlack ? 'yes' : 'NO';
    console.log(`| ${row.session} | ${row.turn} | ${row.prompt} | ${row.cached} | ${row.computed} | ` +
      `${row.new} | ${(row.ttftMs / 1000).toFixed(2)} | ${goal} |`);
  }
  const summary = {};
  for (const s of sessions) summary[s.name] = summarize(rows.filter((r) => r.session === s.name));
  for (const [name, s] of Object.entries(summary)) {
    console.log(`${name}: ${s.turnsMeetingGoal}/${s.laterTurns} later turns computed <= new + ${kSlack}; ` +
      `${(100 * s.reusableServedShare).toFixed(2)}% of reusable tokens and ` +
      `${(100 * s.promptServedShare).toFixed(2)}% of all prompt tokens served from cache`);
  }
  if (args.json) writeFileSync(args.json, JSON.stringify({ rows, summary }, null, 2));
}

main().catch((error) => {
  console.error(`replay-traces: ${error.message}`);
  process.exit(1);
});
