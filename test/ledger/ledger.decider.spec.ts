import type { LedgerEvent } from '../../src/ledger/events';
import { decide, fold, LedgerCommand, platformFee, summaryOf, transactionsOf } from '../../src/ledger/ledger.decider';

const who = { account_id: 'acct_1', mode: 'test' as const, now: '2026-01-01T00:00:00.000Z' };
const asset = { id: 'asset_1', slug: 'arm', title: 'Arm' };
const sale = (purchase: string, amount: number, feeBps = 1500): LedgerCommand => ({
  type: 'RecordSale',
  ...who,
  transaction_id: `txn_${purchase}`,
  purchase_id: purchase,
  asset,
  amount_cents: amount,
  currency: 'usd',
  fee_bps: feeBps,
});
const refund = (purchase: string): LedgerCommand => ({ type: 'RecordRefund', ...who, transaction_id: `txn_r${purchase}`, purchase_id: purchase });
const initiate = (n: number, requiresDestination = false): LedgerCommand => ({
  type: 'RunPayout',
  ...who,
  transaction_id: `txn_po${n}`,
  payout_id: `po_${n}`,
  requires_destination: requiresDestination,
});
const settle = (n: number): LedgerCommand => ({ type: 'SettlePayout', ...who, payout_id: `po_${n}`, transfer_id: `tr_${n}` });
/** A whole payout as the payout run makes it: initiated, then settled by its transfer. */
const payout = (n: number): LedgerCommand[] => [initiate(n), settle(n)];

/** Given the commands so far, the events the last one records (and the state after all). */
function run(commands: LedgerCommand[]) {
  const history: LedgerEvent[] = [];
  let recorded: LedgerEvent[] = [];
  for (const command of commands) {
    recorded = decide(command, fold(history));
    history.push(...recorded);
  }
  return { recorded, state: fold(history) };
}

describe('ledger decider', () => {
  it.each([
    [1, 1500, 0],
    [3, 1500, 0],
    [4, 1500, 1],
    [10, 1500, 2],
    [1003, 1500, 150],
    [1010, 1500, 152],
    [999, 0, 0],
    [999, 10000, 999],
    [100_000_000_000, 10000, 100_000_000_000],
  ])('charges a fee on %i cents at %i bps of %i cents (half up)', (amount, bps, fee) => {
    expect(platformFee(amount, bps)).toBe(fee);
    const { recorded } = run([sale('p', amount, bps)]);
    expect(recorded[0].data).toMatchObject({ amount_cents: amount, fee_cents: fee, net_cents: amount - fee, fee_bps: bps });
  });

  it('records a repeated purchase once', () => {
    expect(run([sale('p', 100), sale('p', 100)]).recorded).toEqual([]);
  });

  describe('partial refunds', () => {
    const part = (purchase: string, amount: number, id: string): LedgerCommand => ({ ...refund(purchase), transaction_id: `txn_${id}`, processor_refund_id: id, amount_cents: amount } as LedgerCommand);

    it('takes back the fee in proportion, rounded half up: 1,000 of a 2,599 sale at 15% (fee 390) gives back 150', () => {
      const { recorded, state } = run([sale('p', 2599), part('p', 1000, 're_1')]);
      expect(recorded[0].data).toMatchObject({ amount_cents: -1000, fee_cents: -150, net_cents: -850, description: 'Partial refund of "Arm"', processor_refund_id: 're_1' });
      expect(summaryOf(state)).toMatchObject({ refunded_cents: 1000, platform_fee_cents: 240, balance_cents: 1359, refund_count: 1 });
    });

    it('records a processor refund reported again once, and the last part takes the rest of the fee exactly', () => {
      const parts = [sale('p', 2599), part('p', 1000, 're_1'), part('p', 1000, 're_1'), part('p', 999, 're_2')];
      expect(run(parts.slice(0, 3)).recorded).toEqual([]);
      const { recorded, state } = run([...parts, refund('p')]);
      // 2,599 - 1,000 - 999 = 600 left, and 390 - 150 - 150 = 90 of the fee.
      expect(recorded[0].data).toMatchObject({ amount_cents: -600, fee_cents: -90, net_cents: -510, description: 'Partial refund of "Arm"' });
      expect(summaryOf(state)).toMatchObject({ gross_cents: 2599, refunded_cents: 2599, platform_fee_cents: 0, balance_cents: 0, refund_count: 3 });
      expect(() => run([...parts, refund('p'), refund('p')])).toThrow(expect.objectContaining({ code: 'already_refunded' }));
    });

    it('never gives back more fee than the sale had, however small the parts', () => {
      const parts = Array.from({ length: 9 }, (_, i) => part('p', 1, `re_${i}`));
      const { state } = run([sale('p', 10, 5000), ...parts, refund('p')]);
      // Cumulative (issue 38): after k cents, round(5k / 10) of the fee is back.
      expect(transactionsOf(state).filter((t) => t.type === 'refund').map((t) => t.fee_cents)).toEqual([-1, 0, -1, 0, -1, 0, -1, 0, -1, 0]);
      expect(summaryOf(state)).toMatchObject({ platform_fee_cents: 0, balance_cents: 0 });
    });

    it('never takes more fee than a part\'s amount: 29 parts of 3 cents then the rest of a 100-cent sale (fee 15) (issue 38, defect 3)', () => {
      const parts = Array.from({ length: 29 }, (_, i) => part('p', 3, `re_${i}`));
      const { state } = run([sale('p', 100), ...parts, refund('p')]);
      const refunds = transactionsOf(state).filter((t) => t.type === 'refund');
      for (const r of refunds) expect(r.net_cents).toBeLessThanOrEqual(0);
      expect(refunds.at(-1)).toMatchObject({ amount_cents: -13, fee_cents: -2, net_cents: -11 });
      expect(summaryOf(state)).toMatchObject({ platform_fee_cents: 0, balance_cents: 0 });
    });

    it.each([0, -5, 2600, 10.5])('refuses a part of %p cents of a 2,599 sale, naming the field, recording nothing', (amount) => {
      expect(() => run([sale('p', 2599), part('p', amount, 're_x')])).toThrow(expect.objectContaining({ code: 'validation_failed', message: expect.stringContaining('"amount_cents"') }));
    });
  });

  it('refunds exactly the sale, once, and only a known sale', () => {
    const { recorded, state } = run([sale('p', 1000), refund('p')]);
    expect(recorded[0].data).toMatchObject({ amount_cents: -1000, fee_cents: -150, net_cents: -850, sale_transaction_id: 'txn_p' });
    expect(summaryOf(state)).toMatchObject({ gross_cents: 1000, platform_fee_cents: 0, earned_cents: 1000, refunded_cents: 1000, balance_cents: 0 });
    expect(() => run([sale('p', 1000), refund('p'), refund('p')])).toThrow(expect.objectContaining({ code: 'already_refunded' }));
    expect(() => run([refund('p')])).toThrow(expect.objectContaining({ code: 'sale_not_found' }));
    // A zero fee refunds as 0, which JSON and equality both treat as a plain zero.
    const [zero] = run([sale('z', 3), refund('z')]).recorded;
    expect(zero.type === 'RefundRecorded' && Object.is(zero.data.fee_cents, 0)).toBe(true);
  });

  it('pays the whole positive balance, settles what came before, and skips nothing to pay or a pause', () => {
    expect(run([sale('a', 1000), refund('a'), sale('b', 2000), initiate(1)]).recorded).toEqual([
      { type: 'PayoutInitiated', data: { payout_id: 'po_1', transaction_id: 'txn_po1', account_id: 'acct_1', mode: 'test', amount_cents: 1700, currency: 'usd', created_at: who.now } },
    ]);
    const { recorded, state } = run([sale('a', 1000), refund('a'), sale('b', 2000), ...payout(1)]);
    expect(recorded).toEqual([
      {
        type: 'PayoutPaid',
        data: {
          payout: { id: 'po_1', object: 'payout', amount_cents: 1700, currency: 'usd', status: 'paid', created_at: who.now, arrival_date: who.now, failure_code: null, failure_message: null },
          account_id: 'acct_1',
          mode: 'test',
          transaction_id: 'txn_po1',
          description: 'Payout',
          transfer_id: 'tr_1',
        },
      },
    ]);
    expect(summaryOf(state)).toMatchObject({ paid_out_cents: 1700, balance_cents: 0 });
    const after = run([sale('a', 1000), refund('a'), sale('b', 2000), ...payout(1), sale('c', 100)]).state;
    expect(transactionsOf(after).map((t) => [t.type, t.status])).toEqual([
      ['sale', 'paid'],
      ['refund', 'paid'],
      ['sale', 'paid'],
      ['payout', 'paid'],
      ['sale', 'pending'],
    ]);
    expect(run([sale('a', 1000), ...payout(1), initiate(2)]).recorded).toEqual([]);
    expect(run([sale('a', 1000), ...payout(1), refund('a'), initiate(2)]).recorded).toEqual([]);
    expect(run([sale('a', 1000), { type: 'PausePayouts', ...who }, initiate(1)]).recorded).toEqual([]);
    expect(run([sale('a', 1000), { type: 'PausePayouts', ...who }, { type: 'ResumePayouts', ...who }, initiate(1)]).recorded).toHaveLength(1);
  });

  it('keeps one payout in flight: no second one starts, and it settles only what came before it', () => {
    const inFlight = [sale('a', 1000), initiate(1)];
    expect(run([...inFlight, initiate(2)]).recorded).toEqual([]);
    // Balance moves only when the transfer settles; a sale recorded meanwhile stays pending and unpaid.
    expect(summaryOf(run(inFlight).state)).toMatchObject({ balance_cents: 850, paid_out_cents: 0 });
    const { state } = run([...inFlight, sale('b', 2000), settle(1)]);
    expect(summaryOf(state)).toMatchObject({ paid_out_cents: 850, balance_cents: 1700 });
    // The payout line stands where it was decided, so each line's running balance adds up.
    expect(transactionsOf(state).map((t) => [t.type, t.status, t.amount_cents])).toEqual([
      ['sale', 'paid', 1000],
      ['payout', 'paid', -850],
      ['sale', 'pending', 2000],
    ]);
    // A refund of the later sale still finds it after the payout line was placed before it.
    expect(run([...inFlight, sale('b', 2000), settle(1), refund('b')]).recorded[0]).toMatchObject({ type: 'RefundRecorded', data: { purchase_id: 'b', amount_cents: -2000 } });
    expect(run([...inFlight, settle(1), settle(1)]).recorded).toEqual([]);
    expect(run([...inFlight, settle(2)]).recorded).toEqual([]);
  });

  it('ends a refused payout without moving money and pauses payouts, so no run pays until the destination is set again', () => {
    const failed = [sale('a', 1000), initiate(1), { type: 'FailPayout', ...who, payout_id: 'po_1', failure_code: 'account_closed', reason: 'refused' } as LedgerCommand];
    expect(run(failed).recorded).toEqual([
      {
        type: 'PayoutFailed',
        data: {
          payout_id: 'po_1',
          account_id: 'acct_1',
          mode: 'test',
          reason: 'refused',
          failed_at: who.now,
          payout: { id: 'po_1', object: 'payout', amount_cents: 850, currency: 'usd', status: 'failed', created_at: who.now, arrival_date: null, failure_code: 'account_closed', failure_message: 'refused' },
        },
      },
      // Issue 38, defect 1: the refusal pauses payouts in the same append, with its reason.
      {
        type: 'PayoutsPaused',
        data: { account_id: 'acct_1', mode: 'test', paused_at: who.now, reason: 'destination_refused: account_closed', failure_code: 'account_closed', destination: null, payout_id: 'po_1' },
      },
    ]);
    expect(summaryOf(run(failed).state)).toMatchObject({ balance_cents: 850, paid_out_cents: 0 });
    expect(run(failed).state.pause).toEqual({ reason: 'destination_refused: account_closed', since: who.now, refused: true });
    expect(transactionsOf(run(failed).state)).toHaveLength(1);
    expect(run([...failed, settle(1)]).recorded).toEqual([]);
    expect(run([...failed, initiate(2)]).recorded).toEqual([]);
    // A destination set (new, or the same again) lifts the refusal's pause; the next run pays the balance.
    const destination: LedgerCommand = { type: 'SetPayoutDestination', ...who, stripe_account: 'acct_new' };
    expect(run([...failed, destination]).recorded.map((e) => [e.type, (e.data as { reason?: string }).reason])).toEqual([
      ['PayoutDestinationSet', undefined],
      ['PayoutsResumed', 'destination_changed'],
    ]);
    expect(run([...failed, destination, initiate(2)]).recorded[0]).toMatchObject({ type: 'PayoutInitiated', data: { amount_cents: 850 } });
    // An operator's pause is not lifted by a destination; a second refusal while paused pauses nothing more.
    const operatorPaused = [sale('a', 1000), { type: 'PausePayouts', ...who } as LedgerCommand];
    expect(run([...operatorPaused, destination]).recorded.map((e) => e.type)).toEqual(['PayoutDestinationSet']);
    expect(run([...operatorPaused, destination]).state.paused).toBe(true);
  });

  it('pays through a processor that needs a destination only once one is set', () => {
    const destination: LedgerCommand = { type: 'SetPayoutDestination', ...who, stripe_account: 'acct_stripe1' };
    expect(run([sale('a', 1000), initiate(1, true)]).recorded).toEqual([]);
    expect(run([sale('a', 1000), destination, initiate(1, true)]).recorded).toHaveLength(1);
    expect(run([destination, destination]).recorded).toEqual([]);
  });

  it("never records an event earlier than the ledger's latest, whatever the deciding instance's clock says", () => {
    const later = { ...sale('a', 1000), now: '2026-01-01T00:00:05.000Z' } as LedgerCommand;
    const slowClock = { ...sale('b', 1000), now: '2026-01-01T00:00:01.000Z' } as LedgerCommand;
    expect(run([later, slowClock]).recorded[0]).toMatchObject({ type: 'SaleRecorded', data: { purchase_id: 'b', created_at: '2026-01-01T00:00:05.000Z' } });
    expect(run([later, { ...initiate(1), now: '2026-01-01T00:00:02.000Z' } as LedgerCommand]).recorded[0].data).toMatchObject({ created_at: '2026-01-01T00:00:05.000Z' });
  });

  it('records a pause or resume only when it changes something', () => {
    expect(run([{ type: 'ResumePayouts', ...who }]).recorded).toEqual([]);
    expect(run([{ type: 'PausePayouts', ...who }, { type: 'PausePayouts', ...who }]).recorded).toEqual([]);
  });

  describe('disputes', () => {
    const open = (purchase: string, amount: number): LedgerCommand => ({
      type: 'OpenDispute',
      ...who,
      transaction_id: `txn_d${purchase}`,
      purchase_id: purchase,
      dispute_id: `dp_${purchase}`,
      amount_cents: amount,
      dispute_fee_cents: 1500,
      reason: 'fraudulent',
    });
    const close = (purchase: string, outcome: 'won' | 'lost'): LedgerCommand => ({
      type: 'CloseDispute',
      ...who,
      transaction_id: `txn_c${purchase}_${outcome}`,
      purchase_id: purchase,
      dispute_id: `dp_${purchase}`,
      outcome,
    });
    const lines = (commands: LedgerCommand[]) => transactionsOf(run(commands).state).map((t) => [t.type, t.amount_cents, t.fee_cents, t.net_cents]);

    it('withholds the net of what is disputed (fee in proportion, half up), once per dispute', () => {
      const { recorded } = run([sale('p1', 2599), open('p1', 1000)]);
      expect(recorded[0]).toMatchObject({ type: 'DisputeOpened', data: { amount_cents: 1000, fee_cents: 150, withheld_cents: 850, dispute_fee_cents: 1500 } });
      expect(run([sale('p1', 2599), open('p1', 2599), open('p1', 2599)]).recorded).toEqual([]);
      expect(lines([sale('p1', 2599), open('p1', 2599)])).toEqual([
        ['sale', 2599, 390, 2209],
        ['dispute', -2209, 0, -2209],
      ]);
      expect(summaryOf(run([sale('p1', 2599), open('p1', 2599)]).state).balance_cents).toBe(0);
    });

    it('releases the net when won and keeps it when lost; the first outcome is final', () => {
      expect(lines([sale('p1', 2599), open('p1', 2599), close('p1', 'won')]).slice(2)).toEqual([['dispute_reversal', 2209, 0, 2209]]);
      expect(summaryOf(run([sale('p1', 2599), open('p1', 2599), close('p1', 'won')]).state).balance_cents).toBe(2209);
      expect(lines([sale('p1', 2599), open('p1', 2599), close('p1', 'lost')])).toHaveLength(2);
      expect(summaryOf(run([sale('p1', 2599), open('p1', 2599), close('p1', 'lost')]).state).balance_cents).toBe(0);
      expect(run([sale('p1', 2599), open('p1', 2599), close('p1', 'lost'), close('p1', 'lost')]).recorded).toEqual([]);
      expect(() => run([sale('p1', 2599), open('p1', 2599), close('p1', 'lost'), close('p1', 'won')])).toThrow(/already closed as lost/);
      expect(() => run([sale('p1', 2599), close('p1', 'won')])).toThrow(/No dispute "dp_p1"/);
    });

    it('refuses a refund while the dispute is open or lost, and allows it once won; a refunded sale cannot be disputed', () => {
      expect(() => run([sale('p1', 2599), open('p1', 2599), refund('p1')])).toThrow(/is disputed/);
      expect(() => run([sale('p1', 2599), open('p1', 2599), close('p1', 'lost'), refund('p1')])).toThrow(/is disputed/);
      expect(run([sale('p1', 2599), open('p1', 2599), close('p1', 'won'), refund('p1')]).recorded[0].type).toBe('RefundRecorded');
      expect(() => run([sale('p1', 2599), refund('p1'), open('p1', 2599)])).toThrow(/cannot be disputed/);
      expect(() => run([sale('p1', 2599), open('p1', 2600)])).toThrow(/between 1 and 2599/);
    });
  });
});
