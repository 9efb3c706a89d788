import type { Queryable } from '../src/database/database';
import type { RecordedEvent } from '../src/event-store/event-store';
import { balanceEffectsOfEach, closes, closesAtOf, JOURNAL_EVENT_TYPES, laterOf, Opened, Posting, postingsOf } from '../src/ledger/journal';
import { chainOf, ChainHead } from '../src/ledger/journal-chain';
import type { Projection } from '../src/projection-runner/projection';
import { JOURNAL_READ_MODEL } from '../src/ledger/journal-queries';

/**
 * journal_postings: every posting of every money event (src/ledger/journal.ts), in log order,
 * each with its account's balance after it (debits minus credits), so a balance as of any
 * moment is one index lookup; journal_accounts: each account's totals now, for the trial
 * balance and the current balance; journal_days: each account's totals per UTC day, for
 * charts over days (revenue against fees) that would otherwise sum every posting of the range;
 * journal_chain: each entry's digest in its mode's hash chain (src/ledger/journal-chain.ts);
 * journal_periods: the closed periods (PeriodClosed), after which what belongs to one is booked
 * on the first open day. Version 3 added occurred_at, journal_chain, journal_periods and balance_days.adjustments_cents.
 */
export const journalProjection: Projection = {
  name: JOURNAL_READ_MODEL,
  version: 3,
  tables: ['journal_postings', 'journal_accounts', 'journal_days', 'balance_days', 'journal_chain', 'journal_periods'],
  schema: `
    CREATE TABLE IF NOT EXISTS journal_postings (
      posting_id          text PRIMARY KEY,
      event_id            text NOT NULL,
      event_type          text NOT NULL,
      position            text NOT NULL,
      recorded_at         timestamptz NOT NULL,
      mode                text NOT NULL,
      currency            text NOT NULL,
      account             text NOT NULL,
      debit_cents         bigint NOT NULL,
      credit_cents        bigint NOT NULL,
      balance_after_cents bigint NOT NULL,
      reference           text,
      processor_ref       text,
      occurred_at         timestamptz,
      kind                text,
      reason              text,
      actor               text
    );
    CREATE INDEX IF NOT EXISTS journal_postings_as_of ON journal_postings (mode, account, recorded_at, position);
    CREATE INDEX IF NOT EXISTS journal_postings_in_order ON journal_postings (mode, position, posting_id);
    CREATE INDEX IF NOT EXISTS journal_postings_by_reference ON journal_postings (mode, reference);
    CREATE INDEX IF NOT EXISTS journal_postings_by_event ON journal_postings (mode, event_id);
    CREATE TABLE IF NOT EXISTS journal_accounts (
      mode          text NOT NULL,
      account       text NOT NULL,
      currency      text NOT NULL,
      debits_cents  bigint NOT NULL,
      credits_cents bigint NOT NULL,
      PRIMARY KEY (mode, account, currency)
    );
    CREATE TABLE IF NOT EXISTS journal_days (
      mode          text NOT NULL,
      day           date NOT NULL,
      account       text NOT NULL,
      currency      text NOT NULL,
      debits_cents  bigint NOT NULL,
      credits_cents bigint NOT NULL,
      PRIMARY KEY (mode, account, day, currency)
    );
    CREATE TABLE IF NOT EXISTS balance_days (
      mode           text NOT NULL,
      account_id     text NOT NULL,
      day            date NOT NULL,
      currency       text NOT NULL,
      sales_cents    bigint NOT NULL,
      fees_cents     bigint NOT NULL,
      refunds_cents  bigint NOT NULL,
      payouts_cents  bigint NOT NULL,
      disputes_cents bigint NOT NULL,
      adjustments_cents bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (mode, account_id, day, currency)
    );
    CREATE TABLE IF NOT EXISTS journal_chain (
      mode       text NOT NULL,
      seq        bigint NOT NULL,
      event_id   text NOT NULL UNIQUE,
      event_type text NOT NULL,
      position   text NOT NULL,
      digest     text NOT NULL,
      PRIMARY KEY (mode, seq)
    );
    CREATE TABLE IF NOT EXISTS journal_periods (
      period_id     text PRIMARY KEY,
      mode          text NOT NULL,
      through       date NOT NULL,
      starts_at     timestamptz,
      closes_at     timestamptz NOT NULL,
      closed_at     timestamptz NOT NULL,
      event_id      text NOT NULL,
      position      text NOT NULL,
      digest_seq    bigint,
      digest_event  text,
      digest        text,
      trial_balance jsonb NOT NULL,
      actor         text
    );
    CREATE INDEX IF NOT EXISTS journal_periods_in_order ON journal_periods (mode, closes_at);`,
  handles: JOURNAL_EVENT_TYPES,
  whenFailing: 'stop', // money: a skipped posting is worse than waiting
  async apply(tx, event) {
    return applyPostings(tx, [event]);
  },
  async applyBatch(tx, events) {
    return applyPostings(tx, events);
  },
};

/**
 * The postings of a batch of events in one insert, each with its account's running balance;
 * the account's totals now and per day, and the creators' balance activity per day, grow by
 * what was inserted, so a posting already there (a batch applied again) is counted once.
 */
async function applyPostings(tx: Queryable, events: RecordedEvent[]): Promise<void> {
  const postings: Posting[] = [];
  const { closed, heads, chained } = await booksState(tx, events);
  for (const event of events) {
    if (event.type === 'PeriodClosed') {
      await recordPeriod(tx, event);
      closed.set(event.data.mode, laterOf(closed.get(event.data.mode), closesAtOf(event.data)));
      continue;
    }
    postings.push(...postingsOf(event, await openedFor(tx, event, postings), closed.get(event.data.mode)));
  }
  if (!postings.length) return;
  // Each event's postings as the next entry of its mode's hash chain; an event already chained (a batch applied again) keeps its entry.
  const entries = chainOf(postings.filter((p) => !chained.has(p.event_id)), heads);

  const keyOf = (p: { mode: string; account: string; currency: string }) => `${p.mode}|${p.account}|${p.currency}`;
  const running = new Map<string, number>();
  const touched = [...new Map(postings.map((p) => [keyOf(p), p])).values()];
  const { rows } = await tx.query<{ mode: string; account: string; currency: string; balance: string }>(
    `SELECT a.mode, a.account, a.currency, a.debits_cents - a.credits_cents AS balance
       FROM journal_accounts a JOIN unnest($1::text[], $2::text[], $3::text[]) AS t(mode, account, currency)
         ON a.mode = t.mode AND a.account = t.account AND a.currency = t.currency`,
    [touched.map((p) => p.mode), touched.map((p) => p.account), touched.map((p) => p.currency)],
  );
  for (const row of rows) running.set(keyOf(row), Number(row.balance));
  const balances = postings.map((p) => {
    const after = (running.get(keyOf(p)) ?? 0) + p.debit_cents - p.credit_cents;
    running.set(keyOf(p), after);
    return after;
  });

  const column = <K extends keyof Posting>(key: K) => postings.map((p) => p[key]);
  const effects = balanceEffectsOfEach(postings).filter(({ activity: a }) => a.sales_cents || a.fees_cents || a.refunds_cents || a.payouts_cents || a.disputes_cents || a.adjustments_cents);
  const effect = (key: keyof (typeof effects)[number]['activity']) => effects.map((e) => e.activity[key]);
  await tx.query(
    `WITH inserted AS (
       INSERT INTO journal_postings (posting_id, event_id, event_type, position, recorded_at, mode, currency, account,
         debit_cents, credit_cents, balance_after_cents, reference, processor_ref, occurred_at, kind, reason, actor)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::text[],
                            $9::bigint[], $10::bigint[], $11::bigint[], $12::text[], $13::text[], $21::timestamptz[], $23::text[], $24::text[], $25::text[])
       ON CONFLICT (posting_id) DO NOTHING
       RETURNING posting_id, mode, account, currency, debit_cents, credit_cents, (recorded_at AT TIME ZONE 'UTC')::date AS day
     ),
     days AS (
       INSERT INTO journal_days AS d (mode, day, account, currency, debits_cents, credits_cents)
       SELECT mode, day, account, currency, sum(debit_cents), sum(credit_cents) FROM inserted GROUP BY mode, day, account, currency
       ON CONFLICT (mode, account, day, currency) DO UPDATE SET
         debits_cents = d.debits_cents + EXCLUDED.debits_cents,
         credits_cents = d.credits_cents + EXCLUDED.credits_cents
     ),
     chained AS (
       INSERT INTO journal_chain (mode, seq, event_id, event_type, position, digest)
       SELECT * FROM unnest($26::text[], $27::bigint[], $28::text[], $29::text[], $30::text[], $31::text[])
     ),
     balance AS (
       INSERT INTO balance_days AS b (mode, account_id, day, currency, sales_cents, fees_cents, refunds_cents, payouts_cents, disputes_cents, adjustments_cents)
       SELECT i.mode, e.account_id, i.day, i.currency, sum(e.sales), sum(e.fees), sum(e.refunds), sum(e.payouts), sum(e.disputes), sum(e.adjustments)
         FROM unnest($14::text[], $15::text[], $16::bigint[], $17::bigint[], $18::bigint[], $19::bigint[], $20::bigint[], $22::bigint[])
                AS e(posting_id, account_id, sales, fees, refunds, payouts, disputes, adjustments)
         JOIN inserted i USING (posting_id)
        GROUP BY i.mode, e.account_id, i.day, i.currency
       ON CONFLICT (mode, account_id, day, currency) DO UPDATE SET
         sales_cents = b.sales_cents + EXCLUDED.sales_cents,
         fees_cents = b.fees_cents + EXCLUDED.fees_cents,
         refunds_cents = b.refunds_cents + EXCLUDED.refunds_cents,
         payouts_cents = b.payouts_cents + EXCLUDED.payouts_cents,
         disputes_cents = b.disputes_cents + EXCLUDED.disputes_cents,
         adjustments_cents = b.adjustments_cents + EXCLUDED.adjustments_cents
     )
     INSERT INTO journal_accounts AS a (mode, account, currency, debits_cents, credits_cents)
     SELECT mode, account, currency, sum(debit_cents), sum(credit_cents) FROM inserted GROUP BY mode, account, currency
     ON CONFLICT (mode, account, currency) DO UPDATE SET
       debits_cents = a.debits_cents + EXCLUDED.debits_cents,
       credits_cents = a.credits_cents + EXCLUDED.credits_cents`,
    [
      column('posting_id'),
      column('event_id'),
      column('event_type'),
      column('position'),
      column('recorded_at'),
      column('mode'),
      column('currency'),
      column('account'),
      column('debit_cents'),
      column('credit_cents'),
      balances,
      column('reference'),
      column('processor_ref'),
      effects.map((e) => e.posting.posting_id),
      effects.map((e) => e.accountId),
      effect('sales_cents'),
      effect('fees_cents'),
      effect('refunds_cents'),
      effect('payouts_cents'),
      effect('disputes_cents'),
      postings.map((p) => p.occurred_at ?? null),
      effect('adjustments_cents'),
      postings.map((p) => p.kind ?? null),
      postings.map((p) => p.reason ?? null),
      postings.map((p) => p.actor ?? null),
      entries.map((e) => e.mode),
      entries.map((e) => e.seq),
      entries.map((e) => e.event_id),
      entries.map((e) => e.event_type),
      entries.map((e) => e.position),
      entries.map((e) => e.digest),
    ],
  );
}

/**
 * In one read, for each mode of the batch: its first open instant (after its latest closed
 * period), its hash chain's head, and which of the batch's events are chained already.
 */
async function booksState(tx: Queryable, events: RecordedEvent[]): Promise<{ closed: Map<string, string>; heads: Map<string, ChainHead>; chained: Set<string> }> {
  const modes = [...new Set(events.map((e) => e.data.mode as string))];
  const { rows } = await tx.query<{ mode: string; seq: string | null; digest: string | null; closes_at: Date | null; chained: string[] }>(
    `SELECT m.mode, h.seq, h.digest,
            (SELECT max(closes_at) FROM journal_periods p WHERE p.mode = m.mode) AS closes_at,
            ARRAY(SELECT c.event_id FROM journal_chain c WHERE c.event_id = ANY($2::text[])) AS chained
       FROM unnest($1::text[]) AS m(mode)
       LEFT JOIN LATERAL (SELECT seq, digest FROM journal_chain WHERE mode = m.mode ORDER BY seq DESC LIMIT 1) h ON true`,
    [modes, events.map((e) => e.id)],
  );
  const closed = new Map<string, string>();
  const heads = new Map<string, ChainHead>();
  const chained = new Set<string>();
  for (const r of rows) {
    if (r.closes_at) closed.set(r.mode, closesAtOf({ closes_at: new Date(r.closes_at).toISOString() }));
    if (r.seq !== null && r.digest !== null) heads.set(r.mode, { seq: Number(r.seq), digest: r.digest });
    for (const id of r.chained) chained.add(id);
  }
  return { closed, heads, chained };
}

async function recordPeriod(tx: Queryable, event: RecordedEvent): Promise<void> {
  const d = event.data;
  await tx.query(
    `INSERT INTO journal_periods (period_id, mode, through, starts_at, closes_at, closed_at, event_id, position, digest_seq, digest_event, digest, trial_balance, actor)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (period_id) DO NOTHING`,
    [d.period_id, d.mode, d.through, d.starts_at, d.closes_at, d.closed_at, event.id, event.position, d.digest?.seq ?? null, d.digest?.event_id ?? null, d.digest?.digest ?? null, JSON.stringify(d.trial_balance), d.actor ?? null],
  );
}

/**
 * What the journal shows opened under the reference an event closes (a payout in transit, a
 * duplicate payment in suspense): from the postings of this batch not yet written, else from
 * the table. undefined for events that close nothing.
 */
async function openedFor(tx: Queryable, event: RecordedEvent, pending: Posting[]): Promise<Opened | null | undefined> {
  const closing = closes(event);
  if (!closing) return undefined;
  const mode = event.data.mode;
  const isOpening = (p: Pick<Posting, 'mode' | 'reference' | 'account' | 'credit_cents'>) =>
    p.mode === mode && p.reference === closing.reference && p.account === closing.account && p.credit_cents > 0;
  const inBatch = pending.find(isOpening);
  if (inBatch) return { amount_cents: inBatch.credit_cents, currency: inBatch.currency };
  const { rows } = await tx.query<{ credit_cents: string; currency: string }>(
    `SELECT credit_cents, currency FROM journal_postings
      WHERE mode = $1 AND reference = $2 AND account = $3 AND credit_cents > 0 ORDER BY position LIMIT 1`,
    [mode, closing.reference, closing.account],
  );
  return rows[0] ? { amount_cents: Number(rows[0].credit_cents), currency: rows[0].currency } : null;
}
