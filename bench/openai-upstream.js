'use strict';
/**
 * A stand-in for an OpenAI-compatible inference server (vLLM, llama.cpp, Ollama): POST
 * /v1/chat/completions speaking OpenAI's wire format, streamed (SSE) or not. The tests and
 * bench/inference.js point the service at it. The last user message steers it:
 *   [slow:MS]      wait MS before each chunk          [stall]     send one chunk, then nothing
 *   [stall-first]  send headers, then nothing          [drop]      send two chunks, then cut the connection
 *   [500]          answer 500                          [400]       answer 400 (the request is refused)
 *   [no-usage]     never report usage
 * Otherwise it answers `tokens` chunks (max_tokens when smaller), one word each.
 * Run alone: node bench/openai-upstream.js [port] [tokens] [delayMs]
 */
const http = require('node:http');

function startUpstream({ port = 0, tokens = 20, delayMs = 0 } = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      const seen = { body, authorization: req.headers.authorization, closedEarly: false, done: false };
      requests.push(seen);
      res.on('close', () => {
        if (!seen.done) seen.closedEarly = true;
      });
      answer(body, res, seen, { tokens, delayMs });
    });
  });
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address();
      resolve({
        url: `http://127.0.0.1:${bound}/v1`,
        requests,
        close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
      });
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function answer(body, res, seen, defaults) {
  const last = [...body.messages].reverse().find((m) => m.role === 'user');
  const prompt = typeof last?.content === 'string' ? last.content : '';
  const delay = Number(/\[slow:(\d+)\]/.exec(prompt)?.[1] ?? defaults.delayMs);
  if (prompt.includes('[500]') || prompt.includes('[400]')) {
    const status = prompt.includes('[500]') ? 500 : 400;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: status === 500 ? 'engine crashed' : 'prompt too long for this model', type: 'server_error', code: null } }));
    seen.done = true;
    return;
  }
  const count = Math.min(defaults.tokens, body.max_tokens ?? Infinity);
  const words = Array.from({ length: count }, (_, i) => `${i === 0 ? '' : ' '}w${i}`);
  const usage = { prompt_tokens: 7 + prompt.length, completion_tokens: count, total_tokens: 7 + prompt.length + count };
  const id = `chatcmpl-upstream-${nextId++}`;
  const chunk = (delta, finish_reason = null, extra = {}) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`;

  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: words.join('') }, finish_reason: 'stop' }], usage }));
    seen.done = true;
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (prompt.includes('[stall-first]')) return;
  for (let i = 0; i < words.length; i++) {
    if (delay) await sleep(delay);
    if (res.destroyed) return;
    res.write(chunk(i === 0 ? { role: 'assistant', content: words[i] } : { content: words[i] }));
    if (prompt.includes('[stall]')) return;
    if (prompt.includes('[drop]') && i === 1) {
      // Let the two chunks leave first: destroying drops whatever is still buffered.
      await sleep(50);
      return res.socket.destroy();
    }
  }
  res.write(chunk({}, count < defaults.tokens ? 'length' : 'stop'));
  if (body.stream_options?.include_usage && !prompt.includes('[no-usage]')) {
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage })}\n\n`);
  }
  seen.done = true;
  res.end('data: [DONE]\n\n');
}
let nextId = 0;

module.exports = { startUpstream };

if (require.main === module) {
  const [port, tokens, delayMs] = process.argv.slice(2).map(Number);
  startUpstream({ port: port || 0, tokens: tokens || 20, delayMs: delayMs || 0 }).then((u) => process.stdout.write(`${u.url}\n`));
}
