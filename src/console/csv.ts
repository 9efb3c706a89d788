/** One CSV cell, as the console's downloads write them. */
export function csvCell(value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value);
  // A cell starting with = + - @ is a formula to a spreadsheet: quoted and prefixed, it stays text.
  const safe = /^[=+\-@\t\r]/.test(text) && !/^-?\d+(\.\d+)?$/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) || safe !== text ? `"${safe.replace(/"/g, '""')}"` : safe;
}
