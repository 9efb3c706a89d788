import OpenAI from 'openai';
import { encode, encodeChat } from 'gpt-tokenizer';
import { payOnPage, PAYS } from '../commerce/commerce-client';
import type { AddressInfo } from 'node:net';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { svc } from '../support/cli';
import { ask, openaiFor, usageOf } from './inference-client';

describe('chat completions in test mode (the sandbox engine), through the official openai client', () => {
  let t: TestApp;
  let key: string;
  let client: OpenAI;
  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    ({ key } = await t.accountWithKey({ tier: 'premium' }));
    client = openaiFor(t, key);
  });
  afterAll(() => t.close());

  it('answers the same request with the same text, counted by a real tokenizer', async () => {
    const messages = [
      { role: 'system' as const, content: 'You plan robot motions.' },
      { role: 'user' as const, content: 'How do I grasp a cube?' },
    ];
    const first = await client.chat.completions.create({ model: 'svc-reason-70b', messages });
    const again = await client.chat.completions.create({ model: 'svc-reason-70b', messages });
    expect(first).toMatchObject({ object: 'chat.completion', model: 'svc-reason-70b', choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }] });
    const text = first.choices[0].message.content!;
    expect(text.length).toBeGreaterThan(10);
    expect(again.choices[0].message.content).toBe(text);
    expect(first.id).not.toBe(again.id);
    expect(first.usage).toEqual({
      prompt_tokens: encodeChat(messages, 'gpt-4o').length,
      completion_tokens: encode(text).length,
      total_tokens: encodeChat(messages, 'gpt-4o').length + encode(text).length,
    });
    const other = await client.chat.completions.create({ model: 'svc-reason-70b', messages: [{ role: 'user', content: 'Map a warehouse.' }] });
    expect(other.choices[0].message.content).not.toBe(text);
  });

  it('streams chunks that add up to the same answer, with a last usage chunk when asked, then [DONE]', async () => {
    const whole = await client.chat.completions.create(ask('Describe a lidar.'));
    const stream = await client.chat.completions.create({ ...ask('Describe a lidar.'), stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id && c.model === 'svc-fast-8b')).toBe(true);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(whole.choices[0].message.content);
    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish!.choices[0].finish_reason).toBe('stop');
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(whole.usage);

    // Without include_usage there is no usage chunk.
    const plain = await client.chat.completions.create({ ...ask('Describe a lidar.'), stream: true });
    const plainChunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of plain) plainChunks.push(chunk);
    expect(plainChunks.some((c) => c.usage)).toBe(false);
  });

  it('honours max_tokens (finish_reason length) and stop', async () => {
    const whole = (await client.chat.completions.create(ask('Plan a path.'))).choices[0].message.content!;
    const cut = await client.chat.completions.create(ask('Plan a path.', { max_tokens: 3 }));
    expect(cut.choices[0].finish_reason).toBe('length');
    expect(cut.usage!.completion_tokens).toBe(3);
    expect(whole.startsWith(cut.choices[0].message.content!)).toBe(true);

    const word = whole.split(' ')[2];
    const stopped = await client.chat.completions.create(ask('Plan a path.', { stop: [` ${word}`] }));
    expect(stopped.choices[0].finish_reason).toBe('stop');
    expect(stopped.choices[0].message.content).toBe(whole.slice(0, whole.indexOf(` ${word}`)));
  });

  it('lists the models with their context window and live prices', async () => {
    const res = await t.request('GET', '/v1/inference/models', { key });
    expect(res.status).toBe(200);
    expect(res.body.items.map((m: any) => m.id).sort()).toEqual(['svc-fast-8b', 'svc-reason-70b']);
    for (const m of res.body.items) {
      expect(m).toMatchObject({ object: 'model', context_window: expect.any(Number), pricing: { input_usd_per_million: expect.any(Number), output_usd_per_million: expect.any(Number) } });
    }
    // Any valid key may read the catalog.
    const free = await t.accountWithKey();
    expect((await t.request('GET', '/v1/inference/models', { key: free.key })).status).toBe(200);
  });

  it('charges each call at the price in force when it started; the catalog shows a new price at once', async () => {
    const { key: own } = await t.accountWithKey({ tier: 'premium' });
    const mine = openaiFor(t, own);
    const set = await t.admin('POST', '/admin/inference/prices', { model: 'svc-reason-70b', input_usd_per_million: 3, output_usd_per_million: 15 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: 'svc-reason-70b', pricing: { input_usd_per_million: 3, output_usd_per_million: 15 } });
    const listed = (await t.request('GET', '/v1/inference/models', { key: own })).body.items.find((m: any) => m.id === 'svc-reason-70b');
    expect(listed.pricing).toEqual({ input_usd_per_million: 3, output_usd_per_million: 15 });

    const a = await mine.chat.completions.create({ model: 'svc-reason-70b', messages: [{ role: 'user', content: 'one' }] });
    await t.admin('POST', '/admin/inference/prices', { model: 'svc-reason-70b', input_usd_per_million: 1, output_usd_per_million: 2 });
    const b = await mine.chat.completions.create({ model: 'svc-reason-70b', messages: [{ role: 'user', content: 'two' }] });
    const expected = Math.ceil(a.usage!.prompt_tokens * 3 + a.usage!.completion_tokens * 15) + Math.ceil(b.usage!.prompt_tokens * 1 + b.usage!.completion_tokens * 2);
    const usage = await usageOf(t, own);
    expect(usage.summary).toMatchObject({ calls: 2, cost_micros: expected, cost_usd: expected / 1e6 });
  });

  it.each([1e-7, 0.0000001, 5e-324, 0.1234567])('refuses a price of %p (more than 6 decimal places) with 400 naming the field, and changes no price', async (price) => {
    const { key } = await t.accountWithKey({ tier: 'premium' });
    const prices = async () => (await t.request('GET', '/v1/inference/models', { key })).body.items.map((m: any) => [m.id, m.pricing]);
    const before = await prices();
    const res = await t.admin('POST', '/admin/inference/prices', { model: 'svc-fast-8b', input_usd_per_million: price, output_usd_per_million: 1 });
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
    expect(res.body.error.message).toContain('input_usd_per_million');
    expect(await prices()).toEqual(before);
    // Six decimal places, however JavaScript prints them, are a price.
    const fine = await t.admin('POST', '/admin/inference/prices', { model: 'svc-fast-8b', input_usd_per_million: 0.000001, output_usd_per_million: 0.1 });
    expect(fine.body).toMatchObject({ pricing: { input_usd_per_million: 0.000001, output_usd_per_million: 0.1 } });
  });

  it('svc inference price sets a live price and svc usage --days reports what the API does', async () => {
    const saved = { SVC_URL: process.env.SVC_URL, ADMIN_TOKEN: process.env.ADMIN_TOKEN };
    process.env.SVC_URL = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    process.env.ADMIN_TOKEN = ADMIN_TOKEN;
    try {
      const { key: own, accountId } = await t.accountWithKey({ tier: 'premium' });
      const priced = await svc('inference', 'price', '--model', 'svc-fast-8b', '--input', '0.5', '--output', '1.5', '--json');
      expect(priced.code).toBe(0);
      expect(JSON.parse(priced.stdout)).toMatchObject({ id: 'svc-fast-8b', pricing: { input_usd_per_million: 0.5, output_usd_per_million: 1.5 } });
      const listed = (await t.request('GET', '/v1/inference/models', { key: own })).body.items.find((m: any) => m.id === 'svc-fast-8b');
      expect(listed.pricing).toEqual({ input_usd_per_million: 0.5, output_usd_per_million: 1.5 });

      const bad = await svc('inference', 'price', '--model', 'svc-fast-8b', '--input', 'cheap', '--output', '1');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--input');

      await openaiFor(t, own).chat.completions.create(ask('price me'));
      const cli = await svc('usage', '--account', accountId, '--mode', 'test', '--days', '7', '--json');
      expect(cli.code).toBe(0);
      const api = await usageOf(t, own, 7);
      expect(JSON.parse(cli.stdout)).toEqual(api);
      expect(api).toMatchObject({ window_days: 7, summary: { calls: 1 } });
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('refuses a free key (403 scope_required naming inference:run) and an inactive live premium key (402), recording nothing', async () => {
    const free = await t.accountWithKey();
    await expect(openaiFor(t, free.key).chat.completions.create(ask('hi'))).rejects.toMatchObject({
      status: 403,
      error: { code: 'scope_required', message: expect.stringContaining('inference:run') },
    });
    await expect(openaiFor(t, free.key).chat.completions.create(ask('hi'))).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    const inactive = await t.accountWithKey({ mode: 'live', tier: 'premium' });
    await expect(openaiFor(t, inactive.key).chat.completions.create(ask('hi'))).rejects.toMatchObject({ status: 402, error: { code: 'payment_required' } });
    expect((await usageOf(t, free.key)).summary.calls).toBe(0);
    expect((await usageOf(t, inactive.key)).summary.calls).toBe(0);
  });

  it('answers 404 model_not_found for an unknown model, as the client\'s NotFoundError', async () => {
    const error = await client.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.error).toMatchObject({ code: 'model_not_found' });
  });

  it('answers 503 service_unavailable for a live call when no upstream is configured', async () => {
    const { accountId } = await t.accountWithKey({ tier: 'premium' });
    const created = await t.admin('POST', '/admin/keys', { account: accountId, mode: 'live', tier: 'premium' });
    // The live premium key starts inactive: its activation checkout is paid first.
    expect((await payOnPage(t, created.body.activation_checkout_url, PAYS)).status).toBe(200);
    const error = await openaiFor(t, created.body.key).chat.completions.create(ask('hi')).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error.status).toBe(503);
    expect(error.error).toMatchObject({ code: 'service_unavailable' });
  });
});
