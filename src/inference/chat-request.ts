import { ApiError, Errors } from '../platform/errors';
import { findModel, InferenceModel } from './model-catalog';

export const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

export interface ChatMessage {
  role: (typeof ROLES)[number];
  content: string;
  name?: string;
}

/** A validated POST /v1/chat/completions body: the OpenAI fields we honour; unknown fields are dropped. */
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
}

const invalid = (field: string, problem: string) => Errors.validationFailed(`Invalid field "${field}": ${problem}.`);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A message's content: a string, or OpenAI's array of text parts (joined). */
function content(value: unknown, field: string): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.length) {
    return value
      .map((part, i) => {
        if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string') {
          throw invalid(`${field}[${i}]`, 'only text parts ({ "type": "text", "text": "..." }) are supported');
        }
        return part.text;
      })
      .join('');
  }
  throw invalid(field, 'must be a string or a non-empty array of text parts');
}

function messages(value: unknown): ChatMessage[] {
  if (value === undefined) throw invalid('messages', 'required');
  if (!Array.isArray(value)) throw invalid('messages', 'must be an array of messages');
  if (!value.length) throw invalid('messages', 'must contain at least one message');
  return value.map((message, i) => {
    const field = `messages[${i}]`;
    if (!isObject(message)) throw invalid(field, 'must be an object with role and content');
    if (message.role === undefined) throw invalid(`${field}.role`, 'required');
    if (!ROLES.includes(message.role as ChatMessage['role'])) throw invalid(`${field}.role`, `must be one of ${ROLES.join(', ')}`);
    if (message.content === undefined || message.content === null) throw invalid(`${field}.content`, 'required');
    const parsed: ChatMessage = { role: message.role as ChatMessage['role'], content: content(message.content, `${field}.content`) };
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
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw invalid('n', 'only 1 is supported');
  const temperature = number(body, 'temperature', 0, 2);
  const topP = number(body, 'top_p', 0, 1);
  const stopSequences = stop(body.stop);

  const model = findModel(body.model);
  if (!model) throw modelNotFound(body.model);
  return { model, messages: parsedMessages, maxTokens: maxTokens(body, model), temperature, topP, stop: stopSequences, stream, includeUsage };
}

export const modelNotFound = (id: string) =>
  new ApiError(404, 'model_not_found', `The model "${id}" does not exist; GET /v1/inference/models lists the models.`);
