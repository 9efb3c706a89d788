import { getMetadataStorage, ValidationError } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { ApiError } from './errors';

/**
 * One problem of a request, as `error.errors[]` lists it (issue 39): the field's path
 * (`answers[0].id`), a stable code clients branch on, and our sentence for people.
 *
 * Codes: `required` (absent), `wrong_type` (a string where a number goes...), `too_long` /
 * `too_short` (text or list length), `too_large` / `too_small` (a number's range),
 * `not_allowed` (a parameter the operation does not take), `invalid` (anything else: a form,
 * one of a set, a value the operation refuses).
 */
export const FIELD_PROBLEM_CODES = ['required', 'wrong_type', 'too_long', 'too_short', 'too_large', 'too_small', 'not_allowed', 'invalid'] as const;

export interface FieldProblem {
  field: string;
  code: (typeof FIELD_PROBLEM_CODES)[number];
  message: string;
}

/** `Unknown parameter "tittle".`: the one sentence for a parameter an operation does not take (body or query). */
export const unknownParameter = (field: string): FieldProblem => ({ field, code: 'not_allowed', message: `Unknown parameter "${field}".` });

/**
 * The whole validation answer: 400 `validation_failed`, every problem in the message and in
 * `errors`. Only unknown parameters: `Unknown parameter "a".`; otherwise
 * `Invalid request: "type" is required; "license" is required.`
 */
export function validationAnswer(problems: FieldProblem[]): ApiError {
  const phrase = (p: FieldProblem) => p.message.replace(/\.$/, '');
  let message: string;
  if (problems.every((p) => p.code === 'not_allowed')) {
    message = problems.length === 1 ? problems[0].message : `Unknown parameters ${problems.map((p) => `"${p.field}"`).join(', ')}.`;
  } else {
    message = `Invalid request: ${problems.map((p) => (p.code === 'not_allowed' ? phrase(p).replace(/^Unknown/, 'unknown') : phrase(p))).join('; ')}.`;
  }
  return new ApiError(400, 'validation_failed', message, { errors: problems });
}

const join = (parent: string, property: string) => (!parent ? property : /^\d+$/.test(property) ? `${parent}[${property}]` : `${parent}.${property}`);

/** The decorator's own arguments (MaxLength's 64), read back from class-validator's metadata. */
function metadataOf(target: object | undefined, property: string, constraint: string): ValidationMetadata | undefined {
  if (!target) return undefined;
  const all = getMetadataStorage().getTargetValidationMetadatas(target.constructor, '', true, false);
  return all.find((m) => m.propertyName === property && (m.name === constraint || m.type === constraint));
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const lengthOf = (value: unknown) => (typeof value === 'string' || Array.isArray(value) ? value.length : undefined);
/** Constraints that say what type the value must be: checked first, as the others mean nothing on the wrong type. */
const TYPE_CONSTRAINTS: Record<string, string> = {
  isString: 'must be a string',
  isInt: 'must be an integer',
  isNumber: 'must be a number',
  isBoolean: 'must be true or false',
  isArray: 'must be an array',
  isObject: 'must be an object',
  nestedValidation: 'must be an object',
};
const TYPE_CONSTRAINTS_EACH: Record<string, string> = {
  isString: 'must be a list of strings',
  isInt: 'must be a list of integers',
  isNumber: 'must be a list of numbers',
  nestedValidation: 'must be a list of objects',
};

/** Our sentence for one failed constraint of a present value. */
function describe(error: ValidationError, constraint: string, field: string): FieldProblem {
  const meta = metadataOf(error.target, error.property, constraint);
  const each = Boolean(meta?.each);
  const args = meta?.constraints ?? [];
  const problem = (code: FieldProblem['code'], text: string): FieldProblem => ({ field, code, message: `"${field}" ${text}.` });
  // A message written on the decorator ("must be an http or https URL") is already ours.
  if (typeof meta?.message === 'string') return problem('invalid', meta.message);
  if (TYPE_CONSTRAINTS[constraint]) return problem('wrong_type', (each && TYPE_CONSTRAINTS_EACH[constraint]) || TYPE_CONSTRAINTS[constraint]);
  const items = each ? 'each item ' : '';
  switch (constraint) {
    case 'maxLength':
      return problem('too_long', `${items}must be at most ${plural(args[0], 'character')}`);
    case 'minLength':
      return problem('too_short', `${items}must be at least ${plural(args[0], 'character')}`);
    case 'isLength': {
      const [min, max] = args as [number, number | undefined];
      const length = lengthOf(error.value);
      if (!each && length !== undefined && length < min) return problem('too_short', min === 1 ? 'must not be empty' : `must be at least ${plural(min, 'character')}`);
      if (max === undefined) return problem('too_short', `${items}must be at least ${plural(min, 'character')}`);
      return problem(each || (length !== undefined && length > max) ? 'too_long' : 'invalid', `${items}must be ${min}-${max} characters`);
    }
    case 'arrayMaxSize':
      return problem('too_long', `must have at most ${plural(args[0], 'item')}`);
    case 'arrayMinSize':
      return problem('too_short', `must have at least ${plural(args[0], 'item')}`);
    case 'arrayUnique':
      return problem('invalid', 'must not list an item twice');
    case 'max':
      return problem('too_large', `${items}must be at most ${args[0]}`);
    case 'min':
      return problem('too_small', `${items}must be at least ${args[0]}`);
    case 'isIn':
      return problem('invalid', `must be one of ${(args[0] as unknown[]).join(', ')}`);
    case 'isEmail':
      return problem('invalid', 'must be an email address');
    case 'isIso8601':
      return problem('invalid', 'must be an ISO 8601 date-time with an offset, such as 2026-01-01T00:00:00Z');
    case 'isUrl':
      return problem('invalid', 'must be a URL');
    case 'matches':
      return problem('invalid', 'is not in the expected form');
    case 'atMostSixDecimals':
      return problem('invalid', 'must have at most 6 decimal places');
    default:
      return problem('invalid', 'is not valid');
  }
}

/**
 * Every problem of a body class-validator checked, one per field (the most basic: absent,
 * then the wrong type, then the rest), in the order of the DTO's fields; our sentences, not
 * class-validator's ("type must be longer than or equal to 1 characters").
 */
export function problemsOf(errors: ValidationError[], parent = ''): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const error of errors) {
    const field = join(parent, error.property);
    const constraints = Object.keys(error.constraints ?? {});
    if (constraints.includes('whitelistValidation')) problems.push(unknownParameter(field));
    else if (constraints.length && error.value === undefined) problems.push({ field, code: 'required', message: `"${field}" is required.` });
    else if (constraints.length) {
      const first = constraints.find((c) => TYPE_CONSTRAINTS[c]) ?? constraints[0];
      problems.push(describe(error, first, field));
    }
    problems.push(...problemsOf(error.children ?? [], field));
  }
  return problems;
}
