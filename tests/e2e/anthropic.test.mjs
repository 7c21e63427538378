// The official @anthropic-ai/sdk client against deltaserve's Messages API.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startServer } from './server.mjs';

let server;
let client;

before(async () => {
  server = await startServer(['--api-key', 'secret-key']);
  client = new Anthropic({ baseURL: server.baseUrl, apiKey: 'secret-key', maxRetries: 0 });
});

after(async () => {
  await server.stop();
});

test('messages.create with a system prompt given as blocks', async () => {
  const msg = await client.messages.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 8,
    system: [{ type: 'text', text: 'You are terse.' }],
    messages: [{ role: 'user', content: 'Hello' }],
    temperature: 0,
  });
  assert.equal(msg.type, 'message');
  assert.equal(msg.role, 'assistant');
  assert.ok(['end_turn', 'max_tokens', 'tool_use', 'stop_sequence'].includes(msg.stop_reason));
  assert.ok(msg.usage.input_tokens > 0);
  assert.equal(typeof msg.usage.cache_read_input_tokens, 'number');
});

test('streaming matches the non-streaming message', async () => {
  const body = {
    model: 'claude-haiku', max_tokens: 10, temperature: 0,
    messages: [{ role: 'user', content: 'Tell me something' }],
  };
  const whole = await client.messages.create(body);
  const stream = client.messages.stream(body);
  const final = await stream.finalMessage();
  assert.deepEqual(final.content, whole.content);
  assert.equal(final.usage.output_tokens, whole.usage.output_tokens);
});

test('tool results round-trip through the template', async () => {
  const msg = await client.messages.create({
    model: 'm', max_tokens: 4,
    tools: [{ name: 'read_file', description: 'Read a file',
      input_schema: { type: 'object', properties: { path: { type: 'string' } } } }],
    messages: [
      { role: 'user', content: 'Read a.txt' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file',
        input: { path: 'a.txt' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1',
        content: 'hello' }] },
    ],
  });
  assert.equal(msg.type, 'message');
});

test('count_tokens', async () => {
  const res = await client.messages.countTokens({
    model: 'm', messages: [{ role: 'user', content: 'Count me' }],
  });
  assert.ok(res.input_tokens > 0);
});

test('a wrong API key is a 401 in the Anthropic error shape', async () => {
  const wrong = new Anthropic({ baseURL: server.baseUrl, apiKey: 'nope', maxRetries: 0 });
  await assert.rejects(
    wrong.messages.create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] }),
    (err) => err.status === 401 && err.error?.type === 'error');
});

test('a prompt longer than the context is a 400 in the Anthropic shape', async () => {
  await assert.rejects(
    client.messages.create({
      model: 'claude-haiku', max_tokens: 4,
      messages: [{ role: 'user', content: 'word '.repeat(200000) }],
    }),
    (err) => err.status === 400 && err.error?.type === 'error' &&
      err.error?.error?.type === 'invalid_request_error' &&
      /context size/.test(err.error?.error?.message ?? ''));
});
