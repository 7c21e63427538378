// The prefix cache seen from real clients: an agent loop computes only what each turn adds,
// Claude Code's per-request billing header does not break the prefix, an interrupted reply is
// snapshotted, and /metrics agrees with what the responses reported.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startServer } from './server.mjs';

// The goal of docs/cache.md: a turn computes at most its new tokens and this many more.
const kSlack = 64;

let server;
let openai;
let anthropic;
const reported = { cached: 0, computed: 0, requests: 0 };

function count(usageCached, timings) {
  assert.equal(usageCached, timings.cached_tokens);
  assert.equal(timings.cached_tokens_by_tier.memory, timings.cached_tokens);
  reported.cached += timings.cached_tokens;
  reported.computed += timings.prompt_tokens_computed;
  reported.requests += 1;
}

async function metric(line) {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? 0 : Number(found.slice(line.length + 1));
}

before(async () => {
  server = await startServer(['--ctx-size', '16384']);
  openai = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: server.baseUrl, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  const code = await server.stop();
  assert.equal(code, 0, `server exit code\n${server.log()}`);
});

test('an agent loop computes only what each turn adds', async () => {
  const tools = [{
    type: 'function',
    function: { name: 'read_file', description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  }];
  const messages = [
    { role: 'system', content: 'You are a coding agent. Use the tools to answer. '.repeat(20) },
    { role: 'user', content: 'What does main.py do?' },
  ];
  let previousPrompt = 0;
  for (let turn = 1; turn <= 5; ++turn) {
    const res = await openai.chat.completions.create({
      model: 'agent', messages, tools, max_tokens: 12, temperature: 0,
    });
    const { usage, timings } = res;
    count(usage.prompt_tokens_details.cached_tokens, timings);
    assert.equal(timings.cached_tokens + timings.prompt_tokens_computed, usage.prompt_tokens);
    const added = usage.prompt_tokens - previousPrompt;
    if (turn === 1) {
      assert.equal(timings.cached_tokens, 0);
      assert.equal(timings.cache, 'miss');
    } else {
      assert.equal(timings.cache, 'hit');
      assert.ok(timings.prompt_tokens_computed <= added + kSlack,
        `turn ${turn}: computed ${timings.prompt_tokens_computed}, new ${added}`);
    }
    assert.ok(timings.ttft_ms >= timings.prefill_ms, JSON.stringify(timings));
    previousPrompt = usage.prompt_tokens;
    // The client keeps the reply as it came back, then a tool result arrives.
    const reply = res.choices[0].message;
    const id = `call_${turn}`;
    messages.push({
      role: 'assistant', content: reply.content ?? '',
      tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: `{"path": "f${turn}.py"}` } }],
    });
    messages.push({ role: 'tool', tool_call_id: id, content: `def f${turn}():\n    return ${turn}\n`.repeat(5) });
  }
});

test('a changing billing header does not change the prompt', async () => {
  const body = (hash) => ({
    model: 'claude-sonnet-4-5', max_tokens: 4, temperature: 0,
    system: [
      { type: 'text', text: `x-anthropic-billing-header: cc_version=2.1.0; cch=${hash};` },
      { type: 'text', text: 'You are Claude Code, working in a repository. '.repeat(20) },
    ],
    messages: [{ role: 'user', content: 'List the files.' }],
  });
  const first = await anthropic.messages.create(body('aaaa1111'));
  count(first.usage.cache_read_input_tokens, first.timings);
  const second = await anthropic.messages.create(body('bbbb2222'));
  count(second.usage.cache_read_input_tokens, second.timings);
  // Anthropic's input_tokens counts what was not read from the cache.
  assert.equal(first.usage.cache_read_input_tokens, 0);
  assert.equal(second.usage.input_tokens + second.usage.cache_read_input_tokens,
    first.usage.input_tokens);
  // The same prompt again: it resumes at the start of the last user message at the latest.
  assert.ok(second.usage.input_tokens <= kSlack, JSON.stringify(second.usage));
});

test('/metrics agrees with the responses', async () => {
  assert.equal(await metric('deltaserve_prompt_tokens_reused_total{tier="memory"}'), reported.cached);
  assert.equal(await metric('deltaserve_prompt_tokens_computed_total'), reported.computed);
  assert.equal(await metric('deltaserve_prompt_tokens_offered_total'),
    reported.cached + reported.computed);
  assert.equal(await metric('deltaserve_ttft_seconds_count'), reported.requests);
  assert.equal(await metric('deltaserve_requests_total{api="chat_completions",outcome="ok"}') +
    await metric('deltaserve_requests_total{api="messages",outcome="ok"}'), reported.requests);
  assert.ok(await metric('deltaserve_cache_bytes{tier="memory"}') > 0);
  let hits = 0;
  for (const reason of ['reached_match', 'no_snapshot', 'snapshot_at_end']) {
    hits += await metric(`deltaserve_cache_restores_total{outcome="hit",reason="${reason}",tier="memory"}`);
  }
  assert.equal(hits, 5, 'every request but the first of each conversation');
  assert.ok(await metric('deltaserve_cache_snapshots{kind="message_boundary",tier="memory"}') > 0);
});

test('an interrupted reply is snapshotted where it stopped', async () => {
  const before = await metric('deltaserve_cache_snapshots{kind="interrupted",tier="memory"}');
  const controller = new AbortController();
  const stream = await openai.chat.completions.create(
    // ignore_eos: a random-weight model may end its reply before the abort, and then nothing is
    // interrupted (the embedded model did, at the 14th chunk).
    { model: 'm', messages: [{ role: 'user', content: 'Write a long story.' }], max_tokens: 4000,
      temperature: 0, stream: true, ignore_eos: true },
    { signal: controller.signal });
  // Far enough into the reply that the state kept for it lies past the end of the prompt.
  let chunks = 0;
  try {
    for await (const _ of stream) if (++chunks === 14) controller.abort();
  } catch (err) {
    assert.equal(err.name, 'APIUserAbortError');
  }
  const deadline = Date.now() + 10000;
  let after;
  do {
    await new Promise((resolve) => setTimeout(resolve, 50));
    after = await metric('deltaserve_cache_snapshots{kind="interrupted",tier="memory"}');
  } while (after === before && Date.now() < deadline);
  assert.equal(after, before + 1);
  const cancelled = await metric('deltaserve_requests_total{api="chat_completions",outcome="cancelled"}');
  assert.ok(cancelled >= 1);
});

test('the cache can be turned off', async () => {
  const off = await startServer(['--cache-ram', '0']);
  try {
    const client = new OpenAI({ baseURL: `${off.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
    const body = { model: 'm', messages: [{ role: 'user', content: 'Same prompt twice' }], max_tokens: 2 };
    await client.chat.completions.create(body);
    const again = await client.chat.completions.create(body);
    assert.equal(again.usage.prompt_tokens_details.cached_tokens, 0);
    assert.equal(again.timings.prompt_tokens_computed, again.usage.prompt_tokens);
  } finally {
    await off.stop();
  }
});
