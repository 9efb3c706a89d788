import OpenAI from 'openai';
import type { AddressInfo } from 'node:net';
import type { TestApp } from '../support/app';

/** The official client, unmodified, pointed at the service; no retries so each call is one request. */
export function openaiFor(t: TestApp, key: string): OpenAI {
  const { port } = t.app.getHttpServer().address() as AddressInfo;
  return new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: key, maxRetries: 0 });
}

export async function usageOf(t: TestApp, key: string, days?: number) {
  const res = await t.request('GET', `/v1/usage${days === undefined ? '' : `?days=${days}`}`, { key });
  if (res.status !== 200) throw new Error(`usage failed: ${res.text}`);
  return res.body;
}

export const ask = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'svc-fast-8b',
  messages: [{ role: 'user' as const, content }],
  ...extra,
});
