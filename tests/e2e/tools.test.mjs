// Tool calls through the official clients: a call forced by tool_choice comes back as OpenAI
// tool_calls and Anthropic tool_use blocks, streamed and not, and its result can be sent back.
// The model has random weights, so only a forced call is certain; that needs the shared Qwen3.5
// test model, whose XML call syntax lets a call be opened by name.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startServer, modelPath } from './server.mjs';

const skip = modelPath ? false : 'needs ../shared/testdata/hybrid/qwen35moe-pub.gguf';
let server;
let openai;
let anthropic;

const openaiTools = [{
  type: 'function',
  function: { name: 'list_files', description: 'List files',
    parameters: { type: 'object', properties: {} } },
}];
const anthropicTools = [{ name: 'list_files', description: 'List files',
  input_schema: { type: 'object', properties: {} } }];

before(async () => {
  if (skip) return;
  server = await startServer();
  openai = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: server.baseUrl, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  if (server) await server.stop();
});

test('openai: a forced call, then its result', { skip }, async () => {
  const messages = [{ role: 'user', content: 'What is here?' }];
  const res = await openai.chat.completions.create({
    model: 'm', messages, tools: openaiTools, max_tokens: 1, temperature: 0,
    tool_choice: { type: 'function', function: { name: 'list_files' } },
  });
  const call = res.choices[0].message.tool_calls?.[0];
  assert.ok(call, JSON.stringify(res.choices[0]));
  assert.equal(call.type, 'function');
  assert.equal(call.function.name, 'list_files');
  assert.equal(typeof JSON.parse(call.function.arguments), 'object');
  assert.match(call.id, /^call_/);

  messages.push({ role: 'assistant', content: null, tool_calls: [call] });
  messages.push({ role: 'tool', tool_call_id: call.id, content: 'a.py\nb.py' });
  const next = await openai.chat.completions.create({
    model: 'm', messages, tools: openaiTools, max_tokens: 4, temperature: 0,
  });
  assert.equal(next.choices.length, 1);
  assert.ok(next.usage.prompt_tokens > res.usage.prompt_tokens);
});

test('openai: a forced call streams its name and arguments', { skip }, async () => {
  const stream = await openai.chat.completions.create({
    model: 'm', messages: [{ role: 'user', content: 'What is here?' }], tools: openaiTools,
    tool_choice: { type: 'function', function: { name: 'list_files' } }, max_tokens: 1,
    temperature: 0, stream: true,
  });
  let name = '';
  let args = '';
  let id = '';
  for await (const chunk of stream) {
    for (const delta of chunk.choices[0]?.delta?.tool_calls ?? []) {
      if (delta.id) id = delta.id;
      if (delta.function?.name) name += delta.function.name;
      if (delta.function?.arguments) args += delta.function.arguments;
    }
  }
  assert.equal(name, 'list_files');
  assert.match(id, /^call_/);
  assert.equal(typeof JSON.parse(args || '{}'), 'object');
});

test('anthropic: a forced tool_use block, streamed and not, then its result', { skip }, async () => {
  const body = {
    model: 'claude-sonnet-4-5', max_tokens: 1, temperature: 0, tools: anthropicTools,
    tool_choice: { type: 'tool', name: 'list_files' },
    messages: [{ role: 'user', content: 'What is here?' }],
  };
  const msg = await anthropic.messages.create(body);
  const use = msg.content.find((b) => b.type === 'tool_use');
  assert.ok(use, JSON.stringify(msg.content));
  assert.equal(use.name, 'list_files');
  assert.equal(typeof use.input, 'object');

  const streamed = await anthropic.messages.stream(body).finalMessage();
  const streamedUse = streamed.content.find((b) => b.type === 'tool_use');
  assert.ok(streamedUse, JSON.stringify(streamed.content));
  assert.equal(streamedUse.name, 'list_files');
  assert.deepEqual(streamedUse.input, use.input);

  const next = await anthropic.messages.create({
    ...body, tool_choice: { type: 'auto' }, max_tokens: 4,
    messages: [...body.messages, { role: 'assistant', content: [use] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'a.py' }] }],
  });
  assert.equal(next.type, 'message');
});
