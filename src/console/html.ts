/**
 * Markup for the console's server-rendered pages. `html` escapes every value it is given
 * (so a listing titled `<img onerror=...>` or an event holding `</script>` renders as text),
 * except markup that `html` itself made; there is no other way to mark a string as safe.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeText(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeText(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** A value for a data-* attribute that the page script parses as JSON (escaped like any attribute). */
export function jsonAttribute(value: unknown): string {
  return JSON.stringify(value);
}
