import { ApiError, Errors } from '../platform/errors';
import { findModel, InferenceModel } from './model-catalog';

export const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

/** A message as the tokenizer and the sandbox see it: its text (text parts joined). */
export interface ChatMessage {
  role: (typeof ROLES)[number];
  content: string;
  name?: string;
}

/**
 * A validated POST /v1/chat/completions body: the fields the gateway itself reads, checked,
 * and the body as sent. Live mode forwards `raw` (every field, known or not, issue 24); the
 * sandbox refuses what it cannot honour (engines/sandbox-engine.ts).
 */
export interface ChatRequest {
  model: InferenceModel;
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop: string[];
  stream: boolean;
  /** stream_options.include_usage: a last chunk carries the usage. */
  includeUsage: boolean;
  /** How many choices; live mode leaves the limit to the upstream, the sandbox has its own. */
  n: number;
  raw: Record<string, unknown>;
}

const invalid = (field: string, problem: string) => Errors.validationFailed(`Invalid field "${field}": ${problem}.`);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A message's text: a string, or the text parts of OpenAI's array of parts, joined. Other
 * parts (image_url, input_audio, file) stay in the raw body for an upstream that takes them;
 * the sandbox refuses them.
 */
function content(value: unknown, field: string): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.length) {
    let text = '';
    value.forEach((part, i) => {
      if (!isObject(part) || typeof part.type !== 'string') throw invalid(`${field}[${i}]`, 'must be a content part with a "type"');
      if (part.type !== 'text') return;
      if (typeof part.text !== 'string') throw invalid(`${field}[${i}].text`, 'must be a string');
      text += part.text;
    });
    return text;
  }
  throw invalid(field, 'must be a string or a non-empty array of content parts');
}

const present = (value: unknown) => value !== undefined && value !== null;

function messages(value: unknown): ChatMessage[] {
  if (value === undefined) throw invalid('messages', 'required');
  if (!Array.isArray(value)) throw invalid('messages', 'must be an array of messages');
  if (!value.length) throw invalid('messages', 'must contain at least one message');
  return value.map((message, i) => {
    const field = `messages[${i}]`;
    if (!isObject(message)) throw invalid(field, 'must be an object with role and content');
    if (message.role === undefined) throw invalid(`${field}.role`, 'required');
    if (!ROLES.includes(message.role as ChatMessage['role'])) throw invalid(`${field}.role`, `must be one of ${ROLES.join(', ')}`);
    if (present(message.tool_calls) && !Array.isArray(message.tool_calls)) throw invalid(`${field}.tool_calls`, 'must be an array');
    // OpenAI's own rule: an assistant message that calls tools may have no content.
    const callsTools = message.role === 'assistant' && (present(message.tool_calls) || present(message.function_call));
    if (!present(message.content) && !callsTools) throw invalid(`${field}.content`, 'required');
    const text = present(message.content) ? content(message.content, `${field}.content`) : '';
    const parsed: ChatMessage = { role: message.role as ChatMessage['role'], content: text };
    if (message.name !== undefined) {
      if (typeof message.name !== 'string') throw invalid(`${field}.name`, 'must be a string');
      parsed.name = message.name;
    }
    return parsed;
  });
}

function number(body: Record<string, unknown>, field: string, min: number, max: number): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) throw invalid(field, `must be a number from ${min} to ${max}`);
  return value;
}

function maxTokens(body: Record<string, unknown>, model: InferenceModel): number | undefined {
  // Newer OpenAI clients send max_completion_tokens; both mean the same here.
  const field = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null ? 'max_completion_tokens' : 'max_tokens';
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw invalid(field, 'must be a positive integer');
  if (value > model.contextWindow) throw invalid(field, `must be at most ${model.contextWindow}, the context window of ${model.id}`);
  return value;
}

function stop(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length > 4 || !list.every((s) => typeof s === 'string' && s.length > 0)) {
    throw invalid('stop', 'must be a non-empty string or an array of up to 4 of them');
  }
  return list as string[];
}

function boolean(value: unknown, field: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalid(field, 'must be a boolean');
  return value;
}

/** Validates an OpenAI chat completion request; every bad field gets 400 naming it, an unknown model 404. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (!isObject(body)) throw Errors.invalidRequest('Send a JSON object.');
  if (body.model === undefined) throw invalid('model', 'required');
  if (typeof body.model !== 'string') throw invalid('model', 'must be a string');
  const parsedMessages = messages(body.messages);
  const stream = boolean(body.stream, 'stream');
  let includeUsage = false;
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (!isObject(body.stream_options)) throw invalid('stream_options', 'must be an object');
    includeUsage = boolean(body.stream_options.include_usage, 'stream_options.include_usage');
  }
  const n = present(body.n) ? body.n : 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw invalid('n', 'must be a positive integer');
  const temperature = number(body, 'temperature', 0, 2);
  const topP = number(body, 'top_p', 0, 1);
  const stopSequences = stop(body.stop);

  const model = findModel(body.model);
  if (!model) throw modelNotFound(body.model);
  return { model, messages: parsedMessages, maxTokens: maxTokens(body, model), temperature, topP, stop: stopSequences, stream, includeUsage, n, raw: body };
}

/** OpenAI's own 404 for a model it does not serve carries `type` and `param` too; so does ours. */
export const modelNotFound = (id: unknown) =>
  new ApiError(404, 'model_not_found', `The model "${String(id)}" does not exist; GET /v1/inference/models lists the models.`, {
    type: 'invalid_request_error',
    param: 'model',
  });
