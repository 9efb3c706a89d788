import * as fs from 'node:fs';
import * as path from 'node:path';

/** Issue 43: one record per decision in docs/decisions/, and the index links every one of them. */
describe('docs/decisions/', () => {
  const dir = 'docs/decisions';
  const records = fs.readdirSync(dir).filter((f) => /^\d{4}-[a-z0-9-]+\.md$/.test(f));
  const index = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
  const links = [...index.matchAll(/\]\((\d{4}-[^)]+\.md)\)/g)].map((m) => m[1]);

  it('links every record from the index, once, and nothing that is not there', () => {
    expect(records.length).toBeGreaterThan(50);
    expect([...links].sort()).toEqual([...records].sort());
  });

  it('numbers the records without gaps or repeats, each opening with its number, title, status and context', () => {
    const numbers = records.map((f) => Number(f.slice(0, 4))).sort((a, b) => a - b);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    for (const record of records) {
      const text = fs.readFileSync(path.join(dir, record), 'utf8');
      expect({ record, head: text.split('\n').slice(0, 4) }).toEqual({
        record,
        head: [expect.stringMatching(new RegExp(`^# ${record.slice(0, 4)}\\. \\S`)), '', expect.stringMatching(/^- Status: (accepted|superseded by \d{4})/), expect.stringMatching(/^- Context: /)],
      });
    }
  });
});
