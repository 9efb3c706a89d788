/**
 * A TypeScript user's code against the installed package's declarations, type-checked (not
 * run) by run-tests.sh with `tsc --noEmit --module nodenext`: answers are typed from the
 * OpenAPI document, and wrong calls do not compile (each @ts-expect-error must find its error).
 */
import { ApiError, Marketplace, constructEvent, type Asset, type ResultOf, type WebhookEvent } from '@robotics-marketplace/sdk';

export async function typed(client: Marketplace): Promise<void> {
  const model = await client.models.create({ file: 'policy.onnx', title: 'Grasp', type: 'rl-policy', license: 'MIT', price_cents: 2500 });
  const amount: number = model.price.amount;
  const slug: string = model.slug;
  for await (const m of client.models.list({ type: 'rl-policy', limit: 10 })) {
    const same: Asset = m;
    void same;
  }
  const page = await client.purchases.list().firstPage();
  const status: 'paid' | 'refunded' | 'disputed' | undefined = page.items[0]?.status;
  const session: ResultOf<'/v1/purchases', 'post'> = await client.purchases.create(slug, {}, { idempotencyKey: 'order-1' });
  const url: string = session.checkout_url;
  const shards = await client.datasets.shards('bin-picking');
  const bytes: number = shards.total_bytes;
  try {
    await client.me();
  } catch (e) {
    if (e instanceof ApiError) {
      const parts: [number, string, string | undefined] = [e.status, e.code, e.requestId];
      void parts;
    }
  }
  const event: WebhookEvent = constructEvent(Buffer.from('{}'), 't=1,v1=00', 'whsec_x');
  void [amount, status, url, bytes, event.type];

  // @ts-expect-error price_cents is a number
  await client.models.create({ title: 'Grasp', type: 'rl-policy', license: 'MIT', price_cents: '2500' });
  // @ts-expect-error not a filter of GET /v1/models
  client.models.list({ no_such_filter: 1 });
  // @ts-expect-error an Asset has no such field
  void model.no_such_field;
  // @ts-expect-error the dataset to upload into is required
  await client.datasets.uploadDir('./episodes', {});
}
