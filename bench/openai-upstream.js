'use strict';
/**
 * A stand-in for an OpenAI-compatible inference server (vLLM, llama.cpp, Ollama): POST
 * /v1/chat/completions speaking OpenAI's wire format, streamed (SSE) or not. The tests and
 * bench/inference.js point the service at it. The last user message steers it:
 *   [slow:MS]      wait MS before each chunk          [stall]     send one chunk, then nothing
 *   [stall-first]  send headers, then nothing          [drop]      send two chunks, then cut the connection
 *   [500]          answer 500                          [400]       answer 400 (the request is refused)
 *   [no-usage]     never report usage                  [parallel]  with tools: call every tool at once
 * Otherwise it answers `tokens` chunks (max_tokens or max_completion_tokens when smaller),
 * one word each. Given `tools` (and a conversation not ending in a tool's result), it calls
 * one in OpenAI's wire format instead: tool_choice's function or the first, its arguments
 * streamed in pieces, finish_reason "tool_calls". `logprobs: true` adds logprobs per word,
 * a `seed` a system_fingerprint and a `service_tier` the same top-level field, as OpenAI's do.
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
  const id = `chatcmpl-upstream-${nextId++}`;
  const envelope = { ...(body.seed === undefined ? {} : { system_fingerprint: 'fp_standin' }), ...(body.service_tier ? { service_tier: body.service_tier } : {}) };
  const calls = toolCalls(body, prompt);
  if (calls) return answerWithToolCalls(body, res, seen, { id, envelope, calls, prompt });
  const count = Math.min(defaults.tokens, body.max_tokens ?? body.max_completion_tokens ?? Infinity);
  const words = Array.from({ length: count }, (_, i) => `${i === 0 ? '' : ' '}w${i}`);
  const usage = { prompt_tokens: 7 + prompt.length, completion_tokens: count, total_tokens: 7 + prompt.length + count };
  const logprobs = (tokens) => ({ content: tokens.map((token) => ({ token, logprob: -0.25, bytes: [...Buffer.from(token)], top_logprobs: [] })), refusal: null });
  const withLogprobs = (choice, tokens) => (body.logprobs ? { ...choice, logprobs: logprobs(tokens) } : choice);
  const chunk = (delta, finish_reason = null, extra = {}) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: body.model, ...envelope, choices: [withLogprobs({ index: 0, delta, finish_reason }, delta.content ? [delta.content] : [])], ...extra })}\n\n`;

  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, object: 'chat.completion', created: 1, model: body.model, ...envelope, choices: [withLogprobs({ index: 0, message: { role: 'assistant', content: words.join('') }, finish_reason: 'stop' }, words)], usage }));
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

/** The calls a model would make: none without tools, none once a tool has answered (it then replies in words). */
function toolCalls(body, prompt) {
  const tools = Array.isArray(body.tools) ? body.tools.filter((t) => t?.type === 'function' && t.function?.name) : [];
  if (!tools.length || body.tool_choice === 'none' || body.messages[body.messages.length - 1]?.role === 'tool') return undefined;
  const named = body.tool_choice?.function?.name;
  const chosen = named ? tools.filter((t) => t.function.name === named) : prompt.includes('[parallel]') ? tools : tools.slice(0, 1);
  return chosen.map((tool, index) => ({ index, id: `call_${nextId}_${index}`, name: tool.function.name, arguments: JSON.stringify({ request: prompt, step: index }) }));
}

/** Arguments arrive in pieces of 5 characters, each a chunk, as real engines stream them. */
async function answerWithToolCalls(body, res, seen, { id, envelope, calls, prompt }) {
  const pieces = calls.map((call) => call.arguments.match(/.{1,5}/gs));
  const completion = pieces.reduce((sum, p) => sum + p.length, 0);
  const usage = { prompt_tokens: 7 + prompt.length, completion_tokens: completion, total_tokens: 7 + prompt.length + completion };
  if (!body.stream) {
    const tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, object: 'chat.completion', created: 1, model: body.model, ...envelope, choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls }, logprobs: null, finish_reason: 'tool_calls' }], usage }));
    seen.done = true;
    return;
  }
  const chunk = (delta, finish_reason = null, extra = {}) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: body.model, ...envelope, choices: [{ index: 0, delta, logprobs: null, finish_reason }], ...extra })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [index, call] of calls.entries()) {
    const opening = { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
    res.write(chunk(index === 0 ? { role: 'assistant', content: null, tool_calls: [opening] } : { tool_calls: [opening] }));
    for (const piece of pieces[index]) res.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  }
  res.write(chunk({}, 'tool_calls'));
  if (body.stream_options?.include_usage && !prompt.includes('[no-usage]')) {
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: body.model, ...envelope, choices: [], usage })}\n\n`);
  }
  seen.done = true;
  res.end('data: [DONE]\n\n');
}

module.exports = { startUpstream };

if (require.main === module) {
  const [port, tokens, delayMs] = process.argv.slice(2).map(Number);
  startUpstream({ port: port || 0, tokens: tokens || 20, delayMs: delayMs || 0 }).then((u) => process.stdout.write(`${u.url}\n`));
}
