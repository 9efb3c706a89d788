import { startTestApp, TestApp } from '../support/app';
import { usageOf } from './inference-client';

describe('chat completions and usage: bad input gets a clear error and records nothing', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ env: { BODY_LIMIT_BYTES: '4096' } });
    ({ key } = await t.accountWithKey({ tier: 'premium' }));
  });
  afterAll(() => t.close());

  const user = [{ role: 'user', content: 'hi' }];
  const cases: [string, Record<string, unknown>, string][] = [
    ['messages missing', { model: 'svc-fast-8b' }, '"messages": required'],
    ['messages empty', { model: 'svc-fast-8b', messages: [] }, '"messages": must contain at least one message'],
    ['messages not an array', { model: 'svc-fast-8b', messages: 'hi' }, '"messages": must be an array'],
    ['a message without role', { model: 'svc-fast-8b', messages: [{ content: 'hi' }] }, '"messages[0].role": required'],
    ['a message without content', { model: 'svc-fast-8b', messages: [{ role: 'user' }] }, '"messages[0].content": required'],
    ['an unknown role', { model: 'svc-fast-8b', messages: [{ role: 'robot', content: 'hi' }] }, '"messages[0].role": must be one of'],
    ['max_tokens 0', { model: 'svc-fast-8b', messages: user, max_tokens: 0 }, '"max_tokens": must be a positive integer'],
    ['max_tokens negative', { model: 'svc-fast-8b', messages: user, max_tokens: -5 }, '"max_tokens": must be a positive integer'],
    ['max_tokens over the context window', { model: 'svc-fast-8b', messages: user, max_tokens: 10_000_000 }, '"max_tokens": must be at most 131072'],
    ['temperature over 2', { model: 'svc-fast-8b', messages: user, temperature: 2.5 }, '"temperature": must be a number from 0 to 2'],
    ['temperature below 0', { model: 'svc-fast-8b', messages: user, temperature: -1 }, '"temperature": must be a number from 0 to 2'],
    ['stream not a boolean', { model: 'svc-fast-8b', messages: user, stream: 'yes' }, '"stream": must be a boolean'],
    ['model missing', { messages: user }, '"model": required'],
    ['stop not strings', { model: 'svc-fast-8b', messages: user, stop: [1] }, '"stop"'],
    ['n not a positive integer', { model: 'svc-fast-8b', messages: user, n: 0 }, '"n": must be a positive integer'],
    ['a content part without a type', { model: 'svc-fast-8b', messages: [{ role: 'user', content: [{ text: 'hi' }] }] }, '"messages[0].content[0]"'],
    ['tool_calls not an array', { model: 'svc-fast-8b', messages: [{ role: 'assistant', content: null, tool_calls: 'f' }] }, '"messages[0].tool_calls": must be an array'],
    ['a user message with null content', { model: 'svc-fast-8b', messages: [{ role: 'user', content: null }] }, '"messages[0].content": required'],
  ];

  it.each(cases)('%s: 400 validation_failed naming the field', async (_name, body, message) => {
    const res = await t.request('POST', '/v1/chat/completions', { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', message: expect.stringContaining(message), request_id: expect.any(String) });
  });

  it('accepts fields the sandbox honours or that change nothing in its answer (others: pass-through.e2e.spec.ts)', async () => {
    const res = await t.request('POST', '/v1/chat/completions', { key, body: { model: 'svc-fast-8b', messages: user, frequency_penalty: 0.5, user: 'u-1', seed: 3 } });
    expect(res.status).toBe(200);
  });

  it('a body over the limit gets 413, a non-JSON body 400, a non-JSON content type 415', async () => {
    const big = await t.request('POST', '/v1/chat/completions', { key, body: { model: 'svc-fast-8b', messages: [{ role: 'user', content: 'x'.repeat(10_000) }] } });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
    const garbled = await t.request('POST', '/v1/chat/completions', { key, payload: '{"model":', headers: { 'content-type': 'application/json' } });
    expect(garbled.status).toBe(400);
    const text = await t.request('POST', '/v1/chat/completions', { key, payload: 'hi', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
  });

  it('GET /v1/usage: days=abc is 400, out of range is clamped, and none of the refused calls above counted', async () => {
    const bad = await t.request('GET', '/v1/usage?days=abc', { key });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'validation_failed', message: expect.stringContaining('"days"') });
    expect((await usageOf(t, key, 0)).window_days).toBe(1);
    expect((await usageOf(t, key, 1000)).window_days).toBe(365);
    expect((await usageOf(t, key)).window_days).toBe(30);
    // Only the one call with the accepted extra fields ran.
    expect((await usageOf(t, key)).summary.calls).toBe(1);
  });

  it('usage needs a valid key: none is 401', async () => {
    expect((await t.request('GET', '/v1/usage')).status).toBe(401);
  });
});
