import fc from 'fast-check';
import OpenAI from 'openai';
import { startUpstream, Upstream } from '../../bench/openai-upstream';
import { findModel } from '../../src/inference/model-catalog';
import { payOnPage, PAYS } from '../commerce/commerce-client';
import { startTestApp, TestApp } from '../support/app';
import { openaiFor, usageOf } from './inference-client';

interface Call {
  mode: 'test' | 'live';
  model: 'svc-fast-8b' | 'svc-reason-70b';
  stream: boolean;
  maxTokens?: number;
  prompt: string;
}

const call: fc.Arbitrary<Call> = fc.record({
  mode: fc.constantFrom('test' as const, 'live' as const),
  model: fc.constantFrom('svc-fast-8b' as const, 'svc-reason-70b' as const),
  stream: fc.boolean(),
  maxTokens: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
  prompt: fc.string({ minLength: 1, maxLength: 40 }),
});

/** The usage of one call as its caller saw it. */
async function run(client: OpenAI, c: Call): Promise<OpenAI.CompletionUsage> {
  const request = { model: c.model, messages: [{ role: 'user' as const, content: c.prompt }], max_tokens: c.maxTokens };
  if (!c.stream) return (await client.chat.completions.create(request)).usage!;
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } })) usage = chunk.usage ?? usage;
  return usage!;
}

describe('usage totals are the sum of the calls made, per mode (property)', () => {
  let upstream: Upstream;
  let t: TestApp;
  beforeAll(async () => {
    upstream = await startUpstream({ tokens: 12 });
    t = await startTestApp({ env: { INFERENCE_UPSTREAM_URL: upstream.url } });
    await t.app.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await t.close();
    await upstream.close();
  });

  it('for random mixes of modes, models, streaming and max_tokens', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 8 }), async (calls) => {
        const { accountId, key: testKey } = await t.accountWithKey({ tier: 'premium' });
        const live = await t.admin('POST', '/admin/keys', { account: accountId, mode: 'live', tier: 'premium' });
        if ((await payOnPage(t, live.body.activation_checkout_url, PAYS)).status !== 200) throw new Error('activation failed');
        const clients = { test: openaiFor(t, testKey), live: openaiFor(t, live.body.key) };
        const made = await Promise.all(calls.map(async (c) => ({ ...c, usage: await run(clients[c.mode], c) })));

        for (const mode of ['test', 'live'] as const) {
          const mine = made.filter((c) => c.mode === mode);
          const cost = (c: (typeof made)[number]) => {
            const p = findModel(c.model)!.defaultPrice;
            return Math.ceil(Number((c.usage.prompt_tokens * p.input_usd_per_million + c.usage.completion_tokens * p.output_usd_per_million).toFixed(6)));
          };
          const usage = await usageOf(t, mode === 'test' ? testKey : live.body.key);
          expect(usage.summary).toMatchObject({
            calls: mine.length,
            total_tokens: mine.reduce((n, c) => n + c.usage.total_tokens, 0),
            cost_micros: mine.reduce((n, c) => n + cost(c), 0),
          });
          for (const m of usage.by_model) {
            const ofModel = mine.filter((c) => c.model === m.model);
            expect(m).toMatchObject({ calls: ofModel.length, total_tokens: ofModel.reduce((n, c) => n + c.usage.total_tokens, 0) });
          }
          expect(usage.by_model.map((m: any) => m.model)).toEqual([...new Set(mine.map((c) => c.model))].sort());
        }
      }),
      { numRuns: 10, endOnFailure: true },
    );
    const verified = await t.admin('GET', '/admin/usage/verify');
    expect(verified.body).toMatchObject({ ok: true, first_difference: null });
  });
});
