import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../src/cli/main';
import { PgliteDatabase } from '../../src/database/pglite-database';
import { copyEvents, CopyConflictError } from '../../src/event-store/copy/copy-events';
import { digestStream } from '../../src/event-store/copy/stream-digest';
import { verifyCopy } from '../../src/event-store/copy/verify-copy';
import { EventStore, EventStoreUnavailableError, RecordedEvent, START } from '../../src/event-store/event-store';
import { EventStoreDbEventStore } from '../../src/event-store/eventstoredb/eventstoredb-event-store';
import { PostgresEventStore } from '../../src/event-store/postgres/postgres-event-store';
import { createTestDatabase, onPostgresServer, TestDatabase } from '../support/database';
import { EsdbStandIn } from '../support/esdb-standin';

/** The service's whole log in global order, as readAll hands it out. */
async function readWholeLog(store: EventStore): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  for (;;) {
    const page = await store.readAll({ after: all.length ? all[all.length - 1].position : START, limit: 500 });
    if (!page.length) return all;
    all.push(...page);
  }
}

/** A target whose answers are lost after `okAppends` appends: the append is taken, the copy sees an error (the harder interruption). */
function losingAnswersAfter(target: EventStore, okAppends: number): EventStore {
  let appends = 0;
  return new Proxy(target, {
    get(t, name) {
      if (name !== 'append') return (t as any)[name]?.bind?.(t) ?? (t as any)[name];
      return async (...args: Parameters<EventStore['append']>) => {
        const result = await t.append(...args);
        if (++appends > okAppends) throw new EventStoreUnavailableError('answer lost (test)');
        return result;
      };
    },
  });
}

describe(`svc events copy: ${onPostgresServer ? 'Postgres server' : 'PGlite'} log into EventStoreDB (stand-in)`, () => {
  let database: TestDatabase;
  let source: PostgresEventStore;
  let standIn: EsdbStandIn;
  let target: EventStoreDbEventStore;
  const id = randomUUID().slice(0, 8);
  const ledger = `ledger-live-acct${id}`;
  const account = `account-acct${id}`;
  const checkout = `checkout-test-cs${id}`;

  beforeAll(async () => {
    database = await createTestDatabase();
    source = new PostgresEventStore(database.db);
    // Interleaved streams, a multi-event append, nested and key-ordered data, metadata.
    await source.append(account, [{ type: 'AccountOpened', data: { name: 'Acme', zeta: 1, alpha: { b: 2, a: [1, 'x'] } } }], 'no_stream');
    await source.append(ledger, [{ type: 'SaleRecorded', data: { amountCents: 1200 }, metadata: { correlationId: 'c1' } }], 'no_stream');
    await source.append(account, [{ type: 'AccountRenamed', data: { name: 'Acme Robotics' } }], 0);
    await source.append(checkout, [{ type: 'CheckoutOpened', data: {} }, { type: 'CheckoutCompleted', data: { paid: true } }], 'no_stream');
    await source.append(ledger, [{ type: 'RefundRecorded', data: { amountCents: -200 } }, { type: 'PayoutRecorded', data: { amountCents: 1000 } }], 0);
    await source.append(account, [{ type: 'AccountVerified', data: { at: '2026-01-01T00:00:00.000Z' } }], 1);
  });
  beforeEach(async () => {
    standIn = await new EsdbStandIn().start();
    target = new EventStoreDbEventStore({ url: standIn.url });
    await target.start();
  });
  afterEach(async () => {
    await target.close();
    await standIn.stop();
  });
  afterAll(async () => {
    await source.close();
    await database.drop();
  });

  it('copies every stream in global order with ids and revisions kept, and verifies counts and hashes', async () => {
    const result = await copyEvents(source, target, { pageSize: 3 });
    expect(result).toMatchObject({ copied: 8, skipped: 0 });
    expect(new Map(result.streams)).toEqual(new Map([[account, 3], [ledger, 3], [checkout, 2]]));

    const here = await readWholeLog(source);
    const there = await readWholeLog(target);
    const shape = (e: RecordedEvent) => [e.id, e.streamId, e.revision, e.type, e.data, e.metadata];
    expect(there.map(shape)).toEqual(here.map(shape));
    for (const stream of [account, ledger, checkout]) {
      expect(digestStream(await target.readStream(stream))).toEqual(digestStream(await source.readStream(stream)));
    }
    expect(await verifyCopy(source, target, result.streams.keys())).toEqual({ streams: 3, events: 8 });
  });

  it('continues an interrupted copy where the target stands, without duplicates', async () => {
    // Two appends taken, the second one's answer lost: the copy stops with an error.
    await expect(copyEvents(source, losingAnswersAfter(target, 1), { pageSize: 2 })).rejects.toThrow(EventStoreUnavailableError);
    const partial = await readWholeLog(target);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(8);

    const again = await copyEvents(source, target, { pageSize: 2 });
    expect(again.skipped).toBe(partial.length);
    expect(again.copied).toBe(8 - partial.length);
    const there = await readWholeLog(target);
    expect(there.map((e) => e.id)).toEqual((await readWholeLog(source)).map((e) => e.id));
    expect(new Set(there.map((e) => e.id)).size).toBe(8);

    // A third run finds everything there and appends nothing.
    expect(await copyEvents(source, target)).toMatchObject({ copied: 0, skipped: 8 });
    expect((await verifyCopy(source, target, again.streams.keys())).firstDifference).toBeUndefined();
  });

  it('refuses a target holding a different event at a revision, naming the stream', async () => {
    await target.append(ledger, [{ type: 'SomethingElse', data: {} }], 'no_stream');
    const failure = copyEvents(source, target);
    await expect(failure).rejects.toThrow(CopyConflictError);
    await expect(failure).rejects.toThrow(`target stream ${ledger} differs from the source at revision 0`);
    expect((await target.readStream(ledger)).map((e) => e.type)).toEqual(['SomethingElse']);
  });

  it('verify names the first stream whose count or hash differs', async () => {
    const result = await copyEvents(source, target);
    await target.append(checkout, [{ type: 'Extra', data: {} }], 1);
    const verified = await verifyCopy(source, target, result.streams.keys());
    expect(verified.firstDifference).toMatchObject({ streamId: checkout, source: { events: 2 }, target: { events: 3 } });
  });

  it('verify names a stream the target holds and the source does not', async () => {
    const result = await copyEvents(source, target);
    const stranger = `account-other${id}`;
    await target.append(stranger, [{ type: 'AccountOpened', data: {} }], 'no_stream');
    const verified = await verifyCopy(source, target, result.streams.keys());
    expect(verified).toMatchObject({ streams: 3, events: 8, firstDifference: { streamId: stranger, source: { events: 0 }, target: { events: 1 } } });
  });

  it('cuts long runs of one stream into appends the server takes', async () => {
    const big = `listing-test-big${id}`;
    const own = await createTestDatabase();
    const store = new PostgresEventStore(own.db);
    const blob = 'x'.repeat(100 * 1024);
    await store.append(big, Array.from({ length: 12 }, (_, i) => ({ type: 'ListingEdited', data: { i, blob } })), 'no_stream');
    const appends: number[] = [];
    const counting = new Proxy(target, {
      get: (t, name) => (name === 'append' ? (s: string, e: any[], x: any) => (appends.push(e.length), t.append(s, e, x)) : (t as any)[name]?.bind?.(t) ?? (t as any)[name]),
    });
    expect(await copyEvents(store, counting)).toMatchObject({ copied: 12 });
    expect(appends.length).toBeGreaterThan(1);
    expect(appends.reduce((a, b) => a + b, 0)).toBe(12);
    expect(digestStream(await target.readStream(big))).toEqual(digestStream(await store.readStream(big)));
    await own.drop();
  });

  describe('the command', () => {
    let env: NodeJS.ProcessEnv;
    let dataDir: string | undefined;
    beforeAll(async () => {
      if (database.url) {
        env = { DATABASE_URL: database.url };
      } else {
        // The CLI opens DATA_DIR/pglite as the service would: give it a copy of this log.
        dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-events-copy-'));
        const onDisk = await PgliteDatabase.open(path.join(dataDir, 'pglite'), await (database.db as PgliteDatabase).dump());
        await onDisk.close();
        env = { DATA_DIR: dataDir };
      }
    });
    afterAll(() => {
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const svc = async (...argv: string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await runCli(argv, (s) => (stdout += s), (s) => (stderr += s), env);
      return { code, stdout, stderr };
    };

    it('copies, verifies and prints a summary; run again it copies nothing', async () => {
      const first = await svc('events', 'copy', '--to', standIn.url);
      expect(first).toEqual({ code: 0, stdout: 'copied 8 events (0 already there); verified 3 streams, 8 events: counts and hashes match\n', stderr: '' });
      const second = await svc('events', 'copy', '--to', standIn.url, '--json');
      expect(second.code).toBe(0);
      expect(JSON.parse(second.stdout)).toEqual({ ok: true, streams: 3, events: 8, copied: 0, already_there: 8, verified_streams: 3 });
    });

    it('names an unreachable target in one line and exits non-zero', async () => {
      await standIn.stop();
      const r = await svc('events', 'copy', '--to', standIn.url);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(new RegExp(`^svc: unreachable: EventStoreDB at ${standIn.url.replace(/[?.]/g, '\\$&')} did not answer: .*\\n$`));
      expect(r.stderr.split('\n')).toHaveLength(2);
    });

    it('refuses a conflicting target, naming the stream', async () => {
      await target.append(checkout, [{ type: 'CheckoutOpened', data: { other: true } }], 'no_stream');
      const r = await svc('events', 'copy', '--to', standIn.url);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`target stream ${checkout} differs from the source at revision 0`);
    });

    it('--help shows the option and an example, running nothing', async () => {
      const r = await svc('events', 'copy', '--help');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^usage: svc events copy --to esdb:\/\/HOST:PORT\?tls=false/);
      expect(r.stdout).toContain('--to VALUE (required)');
      expect(standIn.events.filter((e) => !e.stream.startsWith('$'))).toEqual([]);
    });

    it('rejects a --to that is not an EventStoreDB connection string', async () => {
      const r = await svc('events', 'copy', '--to', 'http://example.com');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--to must be an EventStoreDB connection string');
    });
  });
});
