import type { Mode } from '../../platform/mode';
import { Streams } from '../../platform/streams';

/**
 * "<category>-" of every stream the service writes, from the one list of stream names
 * (platform/streams.ts), so a new category is read back without a second list to keep.
 * The dash keeps "account-" from also matching "accountslug-".
 */
export function serviceStreamPrefixes(): string[] {
  const names = Object.values(Streams).map((name) => (name as (...args: string[]) => string)('live' as Mode, 'x', 'x'));
  return [...new Set(names.map((name) => `${name.slice(0, name.indexOf('-'))}-`))];
}
