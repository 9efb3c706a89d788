import { filteredBy, inMode, ownedBy } from '../../src/platform/owner-scope';

const owner = { accountId: 'acct_1', mode: 'test' as const };

describe('ownedBy', () => {
  it('binds the account and the mode first', () => {
    const s = ownedBy(owner);
    expect(s.where()).toBe('account_id = $1 AND mode = $2');
    expect(s.params).toEqual(['acct_1', 'test']);
  });

  it('numbers further values after its own, in the order they are bound', () => {
    const s = ownedBy(owner);
    const sql = `SELECT * FROM t WHERE ${s.where()} AND id = ${s.param('x_1')} LIMIT ${s.param(21)}`;
    expect(sql).toBe('SELECT * FROM t WHERE account_id = $1 AND mode = $2 AND id = $3 LIMIT $4');
    expect(s.params).toEqual(['acct_1', 'test', 'x_1', 21]);
  });

  it('gives the same placeholders each time, under any alias', () => {
    const s = ownedBy(owner);
    s.param('x_1');
    expect(s.where('p')).toBe('p.account_id = $1 AND p.mode = $2');
    expect(s.where()).toBe('account_id = $1 AND mode = $2');
    expect(s.params).toEqual(['acct_1', 'test', 'x_1']);
  });

  it('takes a whole AuthContext, reading only its account and mode', () => {
    const auth = { ...owner, keyId: 'key_1', tier: 'free' as const, scopes: [], active: true };
    expect(ownedBy(auth).params).toEqual(['acct_1', 'test']);
  });

  it('names another account column when the table keys the owner differently', () => {
    expect(ownedBy(owner, 'buyer_account_id').where()).toBe('buyer_account_id = $1 AND mode = $2');
  });

  it('keeps each statement its own params', () => {
    const a = ownedBy(owner);
    const b = ownedBy(owner);
    a.param(1);
    expect(b.params).toEqual(['acct_1', 'test']);
  });
});

describe('inMode', () => {
  it('binds the mode alone', () => {
    const s = inMode('live');
    expect(`${s.where()} AND kind = ${s.param('model')}`).toBe('mode = $1 AND kind = $2');
    expect(s.params).toEqual(['live', 'model']);
  });
});

describe('filteredBy', () => {
  it('narrows to what is given', () => {
    expect(filteredBy({ accountId: 'acct_1', mode: 'live' }).where()).toBe('account_id = $1 AND mode = $2');
    const byMode = filteredBy({ mode: 'live' });
    expect(byMode.where()).toBe('mode = $1');
    expect(byMode.params).toEqual(['live']);
    const byAccount = filteredBy({ accountId: 'acct_1', mode: undefined });
    expect(byAccount.where()).toBe('account_id = $1');
    expect(byAccount.params).toEqual(['acct_1']);
  });

  it('matches every row when nothing is given', () => {
    const s = filteredBy({});
    expect(s.where()).toBe('TRUE');
    expect(`${s.where()} ORDER BY id LIMIT ${s.param(5)}`).toBe('TRUE ORDER BY id LIMIT $1');
  });
});
