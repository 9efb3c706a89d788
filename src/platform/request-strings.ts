import * as sjson from 'secure-json-parse';
import { Errors } from './errors';

/** Deepest nesting of objects and arrays a JSON body may have; no API body needs more than a few. */
export const MAX_JSON_DEPTH = 64;

/** True when the text opens more than `limit` nested objects or arrays; one linear pass, no recursion. */
function nestedDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * A string Postgres cannot store (text and jsonb refuse NUL and unpaired surrogates), so a
 * command carrying one would fail half-way.
 */
const unstorable = (text: string) => /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

const join = (parent: string, key: string) => (parent ? `${parent}.${key}` : key);

/** The path of the first unstorable string (or key) in a parsed value, e.g. "metadata.tags[2]". */
export function unstorableField(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return unstorable(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorableField(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (unstorable(key)) return join(path, JSON.stringify(key));
      const found = unstorableField(item, join(path, key));
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** Refuses, naming the field, a value holding a string Postgres cannot store. */
export function assertStorable(value: unknown, path = ''): void {
  const field = unstorableField(value, path);
  if (field !== undefined) {
    throw Errors.validationFailed(`Invalid field "${field || 'body'}": text must not contain NUL characters or unpaired surrogates.`);
  }
}

/**
 * The one JSON body parser: a JSON object, at most MAX_JSON_DEPTH deep (checked before
 * parsing, so a deeply nested body costs one linear scan and never the stack), without
 * prototype-poisoning keys, and with only strings Postgres can store.
 */
export function parseJsonObject(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) {
    throw Errors.invalidRequest(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  let parsed: unknown;
  try {
    parsed = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw Errors.invalidRequest('The request body is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw Errors.invalidRequest('The request body must be a JSON object.');
  }
  assertStorable(parsed);
  return parsed as Record<string, unknown>;
}
