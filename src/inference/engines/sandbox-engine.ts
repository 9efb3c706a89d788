import { createHash } from 'node:crypto';
import { seededRandom } from '../../platform/seeded-random';
import type { ChatRequest } from '../chat-request';
import { promptTokens, textTokens, tokenText } from '../tokens';
import type { ChatEngine, EngineEvent, FinishReason } from './engine';

const WORDS = (
  'robot arm gripper joint torque sensor lidar camera depth point cloud pose trajectory planner policy reward ' +
  'episode simulation controller actuator odometry map localization grasp target obstacle velocity frame ' +
  'calibration dataset model inference latency servo encoder wheel base navigation manipulation vision ' +
  'the a of to and with from for each then while after before along toward'
).split(' ');

/** The full answer for a request: the same model, messages and sampling settings give the same text. */
export function sandboxText(request: ChatRequest): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([request.model.id, request.messages, request.temperature ?? 1, request.topP ?? 1]))
    .digest();
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

/**
 * Test mode's engine: no network, no cost to anyone, and the token counts a real engine
 * would report. `stop` cuts the text before the first stop sequence; `max_tokens` cuts it
 * to that many tokens (finish_reason "length").
 */
export class SandboxEngine implements ChatEngine {
  async *complete(request: ChatRequest, signal: AbortSignal): AsyncIterable<EngineEvent> {
    let text = sandboxText(request);
    let reason: FinishReason = 'stop';
    const stopAt = Math.min(...request.stop.map((s) => text.indexOf(s)).filter((i) => i >= 0));
    if (Number.isFinite(stopAt)) text = text.slice(0, stopAt);
    let tokens = textTokens(text);
    if (request.maxTokens !== undefined && tokens.length > request.maxTokens) {
      tokens = tokens.slice(0, request.maxTokens);
      reason = 'length';
    }
    for (const token of tokens) {
      if (signal.aborted) return;
      yield { type: 'delta', text: tokenText([token]) };
    }
    yield { type: 'finish', reason };
    yield { type: 'usage', usage: { prompt_tokens: promptTokens(request.messages), completion_tokens: tokens.length } };
  }
}
