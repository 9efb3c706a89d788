import { KurrentDBClient, jsonEvent, START, streamNameFilter, WrongExpectedVersionError } from '@kurrent/kurrentdb-client';
import { EsdbStandIn } from '../support/esdb-standin';

/** The real client against the stand-in: the wire subset the adapter relies on. */
describe('EventStoreDB stand-in, through the real client', () => {
  let standIn: EsdbStandIn;
  let client: KurrentDBClient;
  beforeAll(async () => {
    standIn = await new EsdbStandIn().start();
    client = KurrentDBClient.connectionString(standIn.url);
  });
  afterAll(async () => {
    await client.dispose();
    await standIn.stop();
  });

  it('appends with expected revisions and reads a stream back', async () => {
    const r = await client.appendToStream('order-1', [jsonEvent({ type: 'A', data: { n: 1 } }), jsonEvent({ type: 'B', data: { n: 2 } })], { streamState: 'no_stream' });
    expect(r.nextExpectedRevision).toBe(1n);
    await expect(client.appendToStream('order-1', jsonEvent({ type: 'C', data: {} }), { streamState: 'no_stream' })).rejects.toBeInstanceOf(WrongExpectedVersionError);
    const events = [];
    for await (const e of client.readStream('order-1')) events.push(e.event!);
    expect(events.map((e) => [e.type, e.revision, e.data])).toEqual([['A', 0n, { n: 1 }], ['B', 1n, { n: 2 }]]);
  });

  it('reads $all with a stream-name prefix filter, leaving system events out', async () => {
    const seen: string[] = [];
    for await (const e of client.readAll({ fromPosition: START, filter: streamNameFilter({ prefixes: ['order-'] }), maxCount: 10 })) seen.push(e.event!.streamId);
    expect(seen).toEqual(['order-1', 'order-1']);
  });
});
