// A stand-in OpenAI-compatible server for the benchmark's failure paths, which a real server
// cannot be made to take on demand: each POST is answered as `respond(body, index)` says, and
// every body is kept for the test to read.
//   { tokens: n }            streams n content events 10 ms apart, then usage
//   { tokens: n, cut: true } streams n content events, then drops the connection
//   { status: 400, message } answers an OpenAI error
// Usage counts one prompt token per word of the last message.
import http from 'node:http';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function promptWords(body) {
  const text = body.prompt ?? body.messages?.at(-1)?.content ?? '';
  return text.split(' ').length;
}

async function stream(res, body, { tokens, cut = false }) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (let i = 0; i < tokens; ++i) {
    await sleep(10);
    res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: `t${i}` } }] })}\n\n`);
  }
  if (cut) {
    await sleep(10);
    res.socket.destroy();
    return;
  }
  const usage = { prompt_tokens: promptWords(body), completion_tokens: tokens };
  res.end(`data: ${JSON.stringify({ choices: [], usage })}\n\ndata: [DONE]\n\n`);
}

export async function startFakeServer(respond) {
  const bodies = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d) => { text += d; });
    req.on('end', async () => {
      if (req.method === 'GET') {
        res.end(JSON.stringify({ data: [{ id: 'fake-model' }] }));
        return;
      }
      const body = JSON.parse(text);
      bodies.push(body);
      const answer = respond(body, bodies.length - 1);
      if (answer.status) {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: answer.message, type: 'server_error' } }));
        return;
      }
      await stream(res, body, answer);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}`,
    bodies,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}
