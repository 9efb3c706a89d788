import { Errors } from './errors';

/** Test and live mode never mix: the mode is part of every stream name and read-model key. */
export type Mode = 'test' | 'live';

export const MODES: readonly Mode[] = ['test', 'live'];

export function isMode(value: unknown): value is Mode {
  return value === 'test' || value === 'live';
}

/** The `mode` query parameter of an operator endpoint. */
export function modeParam(raw: unknown, required: boolean): Mode | undefined {
  if (raw === undefined && !required) return undefined;
  if (!isMode(raw)) throw Errors.validationFailed('Invalid field "mode": must be one of test, live.');
  return raw;
}
