// The official openai client against deltaserve: chat completions, completions and responses,
// streaming and not, usage and timings, and the error paths clients rely on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startServer } from './server.mjs';

let server;
let client;

before(async () => {
  server = await startServer(['--parallel', '2', '--alias', 'gpt-4o']);
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  const code = await server.stop();
  assert.equal(code, 0, `server exit code\n${server.log()}`);
});

test('lists the loaded model and its aliases', async () => {
  const models = await client.models.list();
  const ids = models.data.map((m) => m.id);
  assert.ok(ids.length >= 2, JSON.stringify(ids));
  assert.ok(ids.includes('gpt-4o'));
});

test('chat completion with usage and timings', async () => {
  const res = await client.chat.completions.create({
    model: 'any-name-works',
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there' }],
    max_tokens: 8,
    temperature: 0,
  });
  assert.equal(res.object, 'chat.completion');
  assert.equal(res.choices.length, 1);
  assert.equal(res.choices[0].message.role, 'assistant');
  assert.ok(['stop', 'length', 'tool_calls'].includes(res.choices[0].finish_reason));
  assert.ok(res.usage.prompt_tokens > 0);
  assert.ok(res.usage.completion_tokens > 0 && res.usage.completion_tokens <= 8);
  assert.equal(typeof res.usage.prompt_tokens_details.cached_tokens, 'number');
  assert.equal(typeof res.timings.prefill_ms, 'number');
});

test('greedy output is the same streamed and not streamed', async () => {
  const body = {
    model: 'm',
    messages: [{ role: 'user', content: 'Count to five' }],
    max_tokens: 12,
    temperature: 0,
  };
  const whole = await client.chat.completions.create(body);
  const stream = await client.chat.completions.create({
    ...body, stream: true, stream_options: { include_usage: true },
  });
  let content = '';
  let reasoning = '';
  let usage;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? '';
      reasoning += choice.delta.reasoning_content ?? '';
    }
  }
  assert.equal(content, whole.choices[0].message.content ?? '');
  assert.equal(reasoning, whole.choices[0].message.reasoning_content ?? '');
  assert.equal(usage.completion_tokens, whole.usage.completion_tokens);
});

test('a seed makes sampling reproducible', async () => {
  const body = (seed) => ({
    model: 'm', messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 24,
    temperature: 1.0, top_p: 1.0, seed,
  });
  const a = await client.chat.completions.create(body(42));
  const b = await client.chat.completions.create(body(42));
  assert.equal(a.choices[0].message.content, b.choices[0].message.content);
  assert.equal(a.choices[0].message.reasoning_content, b.choices[0].message.reasoning_content);
  const outputs = new Set();
  for (const seed of [1, 2, 3, 4]) {
    const r = await client.chat.completions.create(body(seed));
    outputs.add(`${r.choices[0].message.reasoning_content}|${r.choices[0].message.content}`);
  }
  assert.ok(outputs.size > 1, 'other seeds sample other replies');
});

test('completions take token ids and return logprobs', async () => {
  const res = await client.completions.create({
    model: 'm', prompt: [1, 2, 3, 4], max_tokens: 4, temperature: 0, logprobs: 3,
  });
  assert.equal(res.object, 'text_completion');
  assert.equal(res.choices[0].logprobs.tokens.length, res.usage.completion_tokens);
  assert.equal(res.choices[0].logprobs.top_logprobs[0] && Object.keys(res.choices[0].logprobs.top_logprobs[0]).length, 3);
});

test('responses API, streamed and not', async () => {
  const res = await client.responses.create({ model: 'm', input: 'Say hi', max_output_tokens: 6 });
  assert.equal(res.object, 'response');
  assert.equal(res.status === 'completed' || res.status === 'incomplete', true, res.status);
  const stream = await client.responses.create({
    model: 'm', input: 'Say hi', max_output_tokens: 6, stream: true,
  });
  const types = [];
  for await (const event of stream) types.push(event.type);
  assert.equal(types[0], 'response.created');
  assert.ok(types.at(-1) === 'response.completed' || types.at(-1) === 'response.incomplete',
    types.join(','));
});

test('malformed requests get OpenAI error bodies', async () => {
  const bad = await fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model": ',
  });
  assert.equal(bad.status, 400);
  const body = await bad.json();
  assert.equal(typeof body.error.message, 'string');
  await assert.rejects(
    client.chat.completions.create({ model: 'm', messages: 'not a list' }),
    (err) => err.status === 400 && /messages/.test(err.message));
});

test('a prompt longer than the context is a 400, not a crash', async () => {
  const long = 'word '.repeat(40000);
  await assert.rejects(
    client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: long }] }),
    (err) => err.status === 400);
  const ok = await client.chat.completions.create({
    model: 'm', messages: [{ role: 'user', content: 'still alive?' }], max_tokens: 2,
  });
  assert.ok(ok.choices.length === 1);
});

test('a client that disconnects mid-stream frees its sequence', async () => {
  const controller = new AbortController();
  const stream = await client.chat.completions.create(
    { model: 'm', messages: [{ role: 'user', content: 'Go on forever' }], max_tokens: 100000,
      stream: true },
    { signal: controller.signal });
  try {
    for await (const _ of stream) controller.abort();
  } catch (err) {
    assert.equal(err.name, 'APIUserAbortError');
  }
  // The server notices at its next token and frees the sequence.
  const deadline = Date.now() + 5000;
  let health;
  do {
    await new Promise((resolve) => setTimeout(resolve, 50));
    health = await (await fetch(`${server.baseUrl}/health`)).json();
  } while (health.sequences_active > 0 && Date.now() < deadline);
  assert.equal(health.sequences_active, 0, JSON.stringify(health));
  const reply = await client.chat.completions.create({
    model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3,
  });
  assert.equal(reply.choices.length, 1);
});
