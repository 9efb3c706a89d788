import OpenAI from 'openai';
import { encode, encodeChat } from 'gpt-tokenizer';
import { startUpstream, Upstream } from '../../bench/openai-upstream';
import { payOnPage, PAYS } from '../commerce/commerce-client';
import { startTestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { ask, openaiFor, usageOf } from './inference-client';

/** Live mode proxies to an OpenAI-compatible upstream: here a stand-in that streams, stalls, drops and fails on request. */
describe('chat completions in live mode, through an OpenAI-compatible upstream', () => {
  let upstream: Upstream;
  let t: Awaited<ReturnType<typeof startTestApp>>;
  let accountId: string;
  let key: string;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await startUpstream({ tokens: 20 });
    t = await startTestApp({
      env: {
        INFERENCE_UPSTREAM_URL: upstream.url,
        INFERENCE_UPSTREAM_KEY: 'sk-upstream',
        INFERENCE_UPSTREAM_MODELS: 'svc-fast-8b=llama3.1:8b',
        // Generous: the upstream stand-in runs in this worker beside PGlite, and a loaded machine
        // must not turn its prompt first chunk into a timeout. The stall tests wait this long.
        INFERENCE_UPSTREAM_TIMEOUT_MS: '2000',
      },
    });
    await t.app.listen(0, '127.0.0.1');
    ({ accountId, key } = await activeLiveKey());
    client = openaiFor(t, key);
  });
  afterAll(async () => {
    await t.close();
    await upstream.close();
  });

  async function activeLiveKey() {
    const { accountId } = await t.accountWithKey({ tier: 'premium' });
    const created = await t.admin('POST', '/admin/keys', { account: accountId, mode: 'live', tier: 'premium' });
    if ((await payOnPage(t, created.body.activation_checkout_url, PAYS)).status !== 200) throw new Error('activation failed');
    return { accountId, key: created.body.key as string, keyId: created.body.id as string };
  }

  const lastRequest = () => upstream.requests[upstream.requests.length - 1];

  it('proxies to the configured upstream model with the upstream key, and takes usage from the upstream', async () => {
    const before = (await usageOf(t, key)).summary;
    const res = await client.chat.completions.create(ask('Hello robot'));
    expect(res.choices[0]).toMatchObject({ message: { role: 'assistant', content: Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ') }, finish_reason: 'stop' });
    expect(res.model).toBe('svc-fast-8b');
    expect(res.usage).toEqual({ prompt_tokens: 7 + 'Hello robot'.length, completion_tokens: 20, total_tokens: 7 + 'Hello robot'.length + 20 });
    expect(lastRequest().body).toMatchObject({ model: 'llama3.1:8b', stream: true, stream_options: { include_usage: true } });
    expect(lastRequest().authorization).toBe('Bearer sk-upstream');
    const after = (await usageOf(t, key)).summary;
    expect(after.calls - before.calls).toBe(1);
    expect(after.total_tokens - before.total_tokens).toBe(res.usage!.total_tokens);
  });

  it('passes max_tokens, temperature, top_p and stop on, and reports finish_reason length', async () => {
    const res = await client.chat.completions.create(ask('Hello', { max_tokens: 5, temperature: 0.2, top_p: 0.9, stop: ['END'] }));
    expect(lastRequest().body).toMatchObject({ max_tokens: 5, temperature: 0.2, top_p: 0.9, stop: ['END'] });
    expect(res.choices[0].finish_reason).toBe('length');
    expect(res.usage!.completion_tokens).toBe(5);
  });

  it('sends each chunk on as it arrives: the caller has the first while the upstream is stalled, then an error event ends the stream', async () => {
    const before = (await usageOf(t, key)).summary.calls;
    const stream = await client.chat.completions.create({ ...ask('[stall] go'), stream: true });
    const received: string[] = [];
    let error: unknown;
    try {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    } catch (e) {
      error = e;
    }
    // The upstream sent one chunk and then nothing: it reached the caller without the rest.
    expect(received).toEqual(['w0']);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'service_unavailable' });
    // What was delivered is metered.
    expect((await usageOf(t, key)).summary.calls).toBe(before + 1);
  });

  it('streams slowly arriving chunks one by one, each with the same id, ending in usage and [DONE]', async () => {
    const stream = await client.chat.completions.create({ ...ask('[slow:20] go'), stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(Array.from({ length: 20 }, (_, i) => `w${i}`).join(' '));
    expect(chunks.filter((c) => c.choices[0]?.delta.content)).toHaveLength(20);
    expect(chunks[chunks.length - 1].usage).toMatchObject({ completion_tokens: 20 });
  });

  it('an upstream answering 5xx, refusing to connect, or silent before its first chunk gives 503 service_unavailable; a 4xx 400', async () => {
    const before = (await usageOf(t, key)).summary.calls;
    for (const prompt of ['[500]', '[stall-first]']) {
      const error = await client.chat.completions.create(ask(prompt)).catch((e) => e);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect(error).toMatchObject({ status: 503, error: { code: 'service_unavailable' } });
    }
    const refused = await client.chat.completions.create(ask('[400]')).catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('prompt too long') });

    const down = await startTestApp({ shared: t.database, env: { INFERENCE_UPSTREAM_URL: 'http://127.0.0.1:9/v1', INFERENCE_UPSTREAM_TIMEOUT_MS: '500', WORKERS: 'false' } });
    try {
      const res = await down.request('POST', '/v1/chat/completions', { key, body: ask('hi') });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('service_unavailable');
    } finally {
      await down.close();
    }
    // Nothing reached a caller, so nothing is metered.
    expect((await usageOf(t, key)).summary.calls).toBe(before);
  });

  it('ends the stream with an error event when the upstream drops the connection mid-stream, never retrying, and meters what was sent', async () => {
    const before = (await usageOf(t, key)).summary.calls;
    const requests = upstream.requests.length;
    const stream = await client.chat.completions.create({ ...ask('[drop] go'), stream: true });
    const received: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((e) => e);
    expect(received.join('')).toBe('w0 w1');
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(upstream.requests.length).toBe(requests + 1);
    await eventually(async () => (await usageOf(t, key)).summary.calls === before + 1, 5000, 'the dropped call to be metered');
  });

  it('cancels the upstream request when the caller goes away, and meters what was sent', async () => {
    const before = (await usageOf(t, key)).summary;
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ ...ask('[slow:100] go'), stream: true }, { signal: controller.signal });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) break; // leaving the loop aborts the request
    }
    controller.abort();
    await eventually(async () => lastRequest().closedEarly, 5000, 'the upstream request to be cancelled');
    expect(lastRequest().done).toBe(false);
    await eventually(async () => (await usageOf(t, key)).summary.calls === before.calls + 1, 5000, 'the cancelled call to be metered');
  });

  it('counts tokens with the tokenizer when the upstream reports no usage, streamed or not', async () => {
    const messages = [{ role: 'user' as const, content: '[no-usage] count me' }];
    const res = await client.chat.completions.create({ model: 'svc-fast-8b', messages });
    expect(res.usage).toMatchObject({ prompt_tokens: encodeChat(messages, 'gpt-4o').length, completion_tokens: encode(res.choices[0].message.content!).length });

    const stream = await client.chat.completions.create({ model: 'svc-fast-8b', messages, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(usage).toMatchObject({ prompt_tokens: encodeChat(messages, 'gpt-4o').length, completion_tokens: encode(text).length });
  });

  it('finishes a stream already under way when its key is revoked; the next call gets 401', async () => {
    const { key: doomed, keyId: doomedId } = await activeLiveKey();
    const mine = openaiFor(t, doomed);
    const stream = await mine.chat.completions.create({ ...ask('[slow:20] go'), stream: true });
    let text = '';
    let revoked = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (!revoked) {
        expect((await t.admin('POST', `/admin/keys/${doomedId}/revoke`)).status).toBe(200);
        revoked = true;
      }
    }
    expect(text.split(' ')).toHaveLength(20);
    await expect(mine.chat.completions.create(ask('again'))).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('keeps live and test usage apart for the same account', async () => {
    const test = await t.admin('POST', '/admin/keys', { account: accountId, mode: 'test', tier: 'premium' });
    const liveBefore = (await usageOf(t, key)).summary.calls;
    await openaiFor(t, test.body.key).chat.completions.create(ask('sandbox only'));
    expect((await usageOf(t, test.body.key)).summary.calls).toBe(1);
    expect((await usageOf(t, key)).summary.calls).toBe(liveBefore);
  });
});
