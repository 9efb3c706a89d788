import { Agent, request } from 'undici';
import type { InferenceUpstreamSettings } from '../../config/settings';
import type { AssetPlan } from '../assets/plan';
import { seedFrom } from '../../platform/seeded-random';
import { Analysis, Answer, EngineFailedError, FactoryEngine, Question } from './engine';
import { parsePlan, parseQuestions } from './plan-schema';

/** The public model id whose upstream (INFERENCE_UPSTREAM_MODELS) drafts plans. */
const PLANNING_MODEL = 'svc-reason-70b';

const ANALYZE = `You analyse requests for robotics assets. Answer with JSON only:
{"kind": "policy_network" | "robot_description" | null, "questions": [{"id": "<identifier>", "question": "<text>"}]}
Ask only for what is essential and missing: the kind when unclear, and the degrees of freedom of an arm. Otherwise "questions": [].`;

const PLAN = `You plan robotics assets. Answer with JSON only, one of:
{"kind":"policy_network","title":str,"task":str,"observation":{"fields":[{"name":identifier,"size":int,"unit":str}]},"action":{"fields":[...]},"hidden_layers":[int],"activation":"tanh"|"relu","assumptions":[str]}
{"kind":"robot_description","title":str,"robot_type":"arm"|"differential_drive"|"mobile_manipulator","dimensions":{str:number|str},"links":[{"name":identifier,"geometry":{"shape":"box","size":[x,y,z]}|{"shape":"cylinder","radius":r,"length":l}|{"shape":"sphere","radius":r},"center":[x,y,z],"mass_kg":m}],"joints":[{"name":identifier,"type":"revolute"|"continuous"|"prismatic"|"fixed","parent":link,"child":link,"origin_xyz":[x,y,z],"axis":[x,y,z],"limit":{"lower":l,"upper":u,"effort":e,"velocity":v}}],"assumptions":[str]}
SI units. Links form one tree. Where the request does not say, choose a default and state it in assumptions, e.g. "payload not understood: assumed 1 kg".`;

/**
 * Live mode's engine: an OpenAI-compatible server asked (non-streamed, JSON mode) for the
 * analysis and the plan, both checked against plan-schema.ts. Any failure (down, timeout,
 * not JSON, not a valid plan) is an EngineFailedError, which the job records in `error`.
 */
export class UpstreamFactoryEngine implements FactoryEngine {
  readonly name = 'upstream' as const;
  private readonly pool: Agent;

  constructor(private readonly settings: InferenceUpstreamSettings) {
    this.pool = new Agent({ headersTimeout: settings.timeoutMs, bodyTimeout: settings.timeoutMs, connect: { timeout: settings.timeoutMs } });
  }

  async analyze(prompt: string): Promise<Analysis> {
    return parseQuestions(await this.ask(ANALYZE, prompt));
  }

  async plan(prompt: string, questions: Question[], answers: Answer[]): Promise<AssetPlan> {
    const qa = questions.map((q) => `Q: ${q.question}\nA: ${answers.find((a) => a.id === q.id)?.answer ?? '(no answer)'}`).join('\n');
    return parsePlan(await this.ask(PLAN, qa ? `${prompt}\n\n${qa}` : prompt), seedFrom(JSON.stringify([prompt, answers])));
  }

  private async ask(system: string, user: string): Promise<unknown> {
    let text: string;
    try {
      const response = await request(`${this.settings.url}/chat/completions`, {
        method: 'POST',
        dispatcher: this.pool,
        headers: { 'content-type': 'application/json', ...(this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : {}) },
        body: JSON.stringify({
          model: this.settings.models[PLANNING_MODEL] ?? PLANNING_MODEL,
          messages: [{ role: 'system', content: system }, { role: 'user', content: user }],
          response_format: { type: 'json_object' },
          temperature: 0,
        }),
      });
      const body = await response.body.text();
      if (response.statusCode !== 200) throw new EngineFailedError(`The model server answered ${response.statusCode}.`);
      text = JSON.parse(body).choices?.[0]?.message?.content ?? '';
    } catch (error) {
      if (error instanceof EngineFailedError) throw error;
      throw new EngineFailedError(`The model server could not be reached: ${(error as Error).message}`);
    }
    try {
      // Some servers wrap JSON mode answers in a code fence anyway.
      return JSON.parse(text.replace(/^\s*```(?:json)?\s*|\s*```\s*$/g, ''));
    } catch {
      throw new EngineFailedError('The model server did not answer with JSON.');
    }
  }
}
