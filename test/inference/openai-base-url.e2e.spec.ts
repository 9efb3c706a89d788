import OpenAI from 'openai';
import type { AddressInfo } from 'node:net';
import { startTestApp, TestApp } from '../support/app';
import { ask, usageOf } from './inference-client';

/**
 * Issue 42: an `openai` client pointed at `{base}/v1/openai` finds every inference model and
 * chats through the same gateway as `/v1/chat/completions`. Driven by the official client,
 * unmodified.
 */
describe('the OpenAI-compatible base URL /v1/openai, through the official openai client', () => {
  let t: TestApp;
  let key: string;
  let client: OpenAI;
  let base: string;
  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    ({ key } = await t.accountWithKey({ tier: 'premium' }));
    client = new OpenAI({ baseURL: `${base}/v1/openai`, apiKey: key, maxRetries: 0 });
  });
  afterAll(() => t.close());

  it('models.list() finds every inference model, as OpenAI model objects with our prices beside', async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model);
    expect(models.map((m) => m.id).sort()).toEqual(['svc-fast-8b', 'svc-reason-70b']);
    for (const m of models) {
      expect(m).toMatchObject({ object: 'model', created: expect.any(Number), owned_by: 'svc' });
      expect(m).toMatchObject({ context_window: 131_072, pricing: { input_usd_per_million: expect.any(Number), output_usd_per_million: expect.any(Number) } });
    }
    // The catalog under /v1/inference/models says the same, under both names.
    const catalog = await t.request('GET', '/v1/inference/models', { key });
    expect(catalog.body.data).toEqual(catalog.body.items);
    expect(catalog.body.data).toEqual(models.map((m) => ({ ...m })));
  });

  it('a price an operator sets shows in models.list() and models.retrieve() at once', async () => {
    const set = await t.admin('POST', '/admin/inference/prices', { model: 'svc-fast-8b', input_usd_per_million: 0.2, output_usd_per_million: 0.6 });
    expect(set.status).toBe(200);
    const listed = (await client.models.list()).data.find((m) => m.id === 'svc-fast-8b');
    expect(listed).toMatchObject({ pricing: { input_usd_per_million: 0.2, output_usd_per_million: 0.6 } });
    const one = await client.models.retrieve('svc-fast-8b');
    expect(one).toEqual(listed);
  });

  it('models.retrieve() of an unknown id rejects with the client\'s NotFoundError and OpenAI\'s error fields', async () => {
    const error = await client.models.retrieve('gpt-5').catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.status).toBe(404);
    expect(error.code).toBe('model_not_found');
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe('model');
    expect(error.error).toMatchObject({ message: expect.stringContaining('gpt-5'), request_id: expect.any(String) });
  });

  it('chat completions answer here as at /v1/chat/completions, and are metered once each', async () => {
    const before = (await usageOf(t, key)).summary.calls;
    const here = await client.chat.completions.create(ask('Describe a gripper.'));
    const there = await new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create(ask('Describe a gripper.'));
    expect(here).toMatchObject({ object: 'chat.completion', model: 'svc-fast-8b', choices: [{ finish_reason: 'stop' }] });
    expect(here.choices[0].message.content).toBe(there.choices[0].message.content);
    expect(here.usage).toEqual(there.usage);
    expect((await usageOf(t, key)).summary.calls - before).toBe(2);
  });

  it('streams chunks that add up to the same answer, with the usage chunk, then ends', async () => {
    const whole = await client.chat.completions.create(ask('Describe a lidar.'));
    const stream = await client.chat.completions.create({ ...ask('Describe a lidar.'), stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id)).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(whole.choices[0].message.content);
    expect(chunks[chunks.length - 1].usage).toEqual(whole.usage);
  });

  it('refuses a free key\'s chat (403 scope_required) but lets it list the models', async () => {
    const free = await t.accountWithKey();
    const freeClient = new OpenAI({ baseURL: `${base}/v1/openai`, apiKey: free.key, maxRetries: 0 });
    expect((await freeClient.models.list()).data).toHaveLength(2);
    await expect(freeClient.chat.completions.create(ask('hi'))).rejects.toMatchObject({ status: 403, error: { code: 'scope_required' } });
    expect((await usageOf(t, free.key)).summary.calls).toBe(0);
  });

  it('refuses a bad key with 401 before anything else', async () => {
    const error = await new OpenAI({ baseURL: `${base}/v1/openai`, apiKey: 'sk_test_nope', maxRetries: 0 }).models.list().catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
