import { createHash } from 'node:crypto';
import { seededRandom } from '../../platform/seeded-random';
import { ApiError, Errors } from '../../platform/errors';
import type { ChatRequest } from '../chat-request';
import { promptTokens, textTokens, tokenText } from '../tokens';
import type { ChatEngine, EngineEvent, FinishReason } from './engine';

const WORDS = (
  'robot arm gripper joint torque sensor lidar camera depth point cloud pose trajectory planner policy reward ' +
  'episode simulation controller actuator odometry map localization grasp target obstacle velocity frame ' +
  'calibration dataset model inference latency servo encoder wheel base navigation manipulation vision ' +
  'the a of to and with from for each then while after before along toward'
).split(' ');

/** More choices than this is a load test, not a test of the caller's code. */
export const SANDBOX_MAX_N = 8;

/**
 * Request fields the sandbox honours, or that change nothing in an answer it gives:
 * `user`, `safety_identifier` and `metadata` only label the call; `seed` and the penalties
 * select the deterministic answer, as temperature and top_p do.
 */
const ACCEPTED = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'n',
  'response_format', 'seed', 'frequency_penalty', 'presence_penalty', 'user', 'safety_identifier', 'metadata',
]);
/** Fields accepted only with the value that turns them off (what a client sends by default). */
const OFF: Record<string, unknown> = { logprobs: false, store: false };
/** Message fields that do not ask for anything: a reply appended to the conversation as the client got it carries them. */
const MESSAGE_FIELDS = new Set(['role', 'content', 'name', 'tool_call_id', 'refusal']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const absent = (value: unknown) => value === undefined || value === null || (Array.isArray(value) && value.length === 0);

const unsupported = (param: string, why = '') =>
  new ApiError(
    400,
    'unsupported_parameter',
    `Test mode's sandbox engine cannot honour "${param}"${why}: leave it out here, or send it with a live key, whose engine gets it unchanged.`,
    { param },
  );

/**
 * What the sandbox will answer for this request: the choices and whether they are JSON.
 * Anything it cannot honour is refused rather than ignored, so a test run never passes on an
 * answer that quietly left a field out (issue 24).
 */
function honoured(request: ChatRequest): { json: boolean } {
  const body = request.raw;
  for (const field of Object.keys(body)) {
    const value = body[field];
    if (ACCEPTED.has(field) || absent(value) || (field in OFF && value === OFF[field])) continue;
    throw unsupported(field);
  }
  (body.messages as unknown[]).forEach((message, i) => {
    for (const [field, value] of Object.entries(message as Record<string, unknown>)) {
      if (!MESSAGE_FIELDS.has(field) && !absent(value)) throw unsupported(`messages[${i}].${field}`);
    }
    const content = (message as Record<string, unknown>).content;
    if (Array.isArray(content)) {
      content.forEach((part: { type: string }, j) => {
        if (part.type !== 'text') throw unsupported(`messages[${i}].content[${j}]`, ` (a "${part.type}" part; only text parts are)`);
      });
    }
  });
  if (request.n > SANDBOX_MAX_N) throw Errors.validationFailed(`Invalid field "n": must be at most ${SANDBOX_MAX_N} in test mode.`);
  const format = body.response_format;
  if (absent(format)) return { json: false };
  if (!isObject(format) || typeof format.type !== 'string') throw Errors.validationFailed('Invalid field "response_format": must be an object with a "type".');
  if (format.type === 'text') return { json: false };
  if (format.type === 'json_object') return { json: true };
  throw unsupported('response_format', ` of type "${format.type}" (text and json_object are)`);
}

/** The full answer for a request: the same model, messages and sampling settings give the same text. */
export function sandboxText(request: ChatRequest, choice = 0): string {
  const { seed, frequency_penalty, presence_penalty } = request.raw;
  const key: unknown[] = [request.model.id, request.messages, request.temperature ?? 1, request.topP ?? 1];
  // Only when used, so that a request without them keeps the answer it always had.
  if (seed != null || frequency_penalty != null || presence_penalty != null || choice > 0) key.push([seed, frequency_penalty, presence_penalty, choice]);
  const digest = createHash('sha256').update(JSON.stringify(key)).digest();
  const next = seededRandom(digest.readUInt32BE(0));
  const sentences: string[] = [];
  const count = 1 + Math.floor(next() * 4);
  for (let s = 0; s < count; s++) {
    const length = 6 + Math.floor(next() * 12);
    const words = Array.from({ length }, () => WORDS[Math.floor(next() * WORDS.length)]);
    words[0] = words[0][0].toUpperCase() + words[0].slice(1);
    sentences.push(`${words.join(' ')}.`);
  }
  return sentences.join(' ');
}

function answer(request: ChatRequest, choice: number, json: boolean): { tokens: number[]; reason: FinishReason } {
  const sentences = sandboxText(request, choice);
  let text = json ? JSON.stringify({ answer: sentences }) : sentences;
  let reason: FinishReason = 'stop';
  const stopAt = Math.min(...request.stop.map((s) => text.indexOf(s)).filter((i) => i >= 0));
  if (Number.isFinite(stopAt)) text = text.slice(0, stopAt);
  let tokens = textTokens(text);
  if (request.maxTokens !== undefined && tokens.length > request.maxTokens) {
    tokens = tokens.slice(0, request.maxTokens);
    reason = 'length';
  }
  return { tokens, reason };
}

/**
 * Test mode's engine: no network, no cost to anyone, and the token counts a real engine
 * would report. `stop` cuts the text before the first stop sequence; `max_tokens` cuts it
 * to that many tokens (finish_reason "length"; a JSON answer is then cut too, as OpenAI's
 * is). `n` choices are streamed interleaved, token by token, as OpenAI does.
 */
export class SandboxEngine implements ChatEngine {
  async *complete(request: ChatRequest, signal: AbortSignal): AsyncIterable<EngineEvent> {
    const { json } = honoured(request);
    const answers = Array.from({ length: request.n }, (_, i) => answer(request, i, json));
    const longest = Math.max(...answers.map((a) => a.tokens.length));
    for (let t = 0; t < longest; t++) {
      for (let index = 0; index < answers.length; index++) {
        const token = answers[index].tokens[t];
        if (token === undefined) continue;
        if (signal.aborted) return;
        const content = tokenText([token]);
        yield { type: 'chunk', chunk: { choices: [{ index, delta: t === 0 ? { role: 'assistant', content } : { content }, logprobs: null, finish_reason: null }] } };
      }
    }
    for (let index = 0; index < answers.length; index++) {
      const { tokens, reason } = answers[index];
      yield { type: 'chunk', chunk: { choices: [{ index, delta: tokens.length ? {} : { role: 'assistant' }, logprobs: null, finish_reason: reason }] } };
    }
    const completion = answers.reduce((sum, a) => sum + a.tokens.length, 0);
    yield { type: 'usage', usage: { prompt_tokens: promptTokens(request.messages), completion_tokens: completion } };
  }
}
