import type { AssetPlan } from '../assets/plan';
import { seedFrom } from '../../platform/seeded-random';
import type { Analysis, Answer, FactoryEngine, Question } from './engine';
import { policyPlan } from './sandbox/policy-plans';
import { mentions, readDof, readKind, ReadKind, readLength, readMass } from './sandbox/prompt-reading';
import { armPlan, ArmSpec, BaseSpec, differentialDrivePlan, mobileManipulatorPlan } from './sandbox/robot-plans';

export const KIND_QUESTION: Question = {
  id: 'kind',
  question: 'What should be generated: a policy network (ONNX), or a robot description (URDF) of an arm, a differential-drive base or a mobile manipulator?',
};
export const DOF_QUESTION: Question = { id: 'dof', question: 'How many degrees of freedom (joints) should the arm have?' };

const DEFAULT_DOF = 6;

const needsArm = (k: ReadKind | undefined) => k?.kind === 'robot_description' && k.robotType !== 'differential_drive';

/**
 * Test mode's engine: rules over the prompt and answers (sandbox/prompt-reading.ts), no
 * randomness and no network. The same prompt and answers always give the same plan, and
 * so (assets/) the same bytes.
 */
export class SandboxFactoryEngine implements FactoryEngine {
  readonly name = 'sandbox' as const;

  async analyze(prompt: string): Promise<Analysis> {
    const read = readKind(prompt);
    const questions: Question[] = [];
    // Without a kind, the DoF question goes in the same round in case the answer is an arm:
    // there is only ever one round of clarify.
    if (!read) questions.push(KIND_QUESTION, DOF_QUESTION);
    else if (needsArm(read) && readDof(prompt) === undefined) questions.push(DOF_QUESTION);
    return { kind: read?.kind, questions };
  }

  async plan(prompt: string, questions: Question[], answers: Answer[]): Promise<AssetPlan> {
    const answer = (id: string) => answers.find((a) => a.id === id)?.answer;
    const asked = (id: string) => questions.some((q) => q.id === id);
    const assumptions: string[] = [];
    const all = [prompt, ...answers.map((a) => a.answer)].join('\n');

    let kind = readKind(prompt) ?? (asked('kind') ? readKind(answer('kind') ?? '') : undefined);
    if (!kind) {
      kind = { kind: 'robot_description', robotType: 'arm' };
      assumptions.push(`kind not understood${asked('kind') ? ` from "${short(answer('kind'))}"` : ''}: assumed a robot arm description (URDF)`);
    }
    const seed = seedFrom(JSON.stringify([prompt, answers]));
    if (kind.kind === 'policy_network') return policyPlan(asked('dof') && answer('dof') ? `${prompt}\n${answer('dof')} dof` : prompt, seed, assumptions);

    const arm = (): ArmSpec => {
      let dof = readDof(prompt) ?? (asked('dof') ? readDof(answer('dof') ?? '') : undefined);
      if (dof === undefined) {
        dof = DEFAULT_DOF;
        assumptions.push(`degrees of freedom not understood${asked('dof') ? ` from "${short(answer('dof'))}"` : ''}: assumed ${DEFAULT_DOF}`);
      }
      return {
        dof,
        reach_m: readOr(readLength(all, 'reach'), 0.8, 'reach not understood: assumed 0.8 m', assumptions),
        payload_kg: readOr(readMass(all, 'payload'), 1, 'payload not understood: assumed 1 kg', assumptions),
        gripper: mentions(all, /gripper|finger|grasp/),
      };
    };
    const base = (payload?: number): BaseSpec => ({
      wheel_radius_m: readOr(readLength(all, 'wheels?'), 0.1, 'wheel radius not understood: assumed 0.1 m', assumptions),
      length_m: readOr(readLength(all, 'long|length'), 0.6, 'base length not understood: assumed 0.6 m', assumptions),
      width_m: readOr(readLength(all, 'wide|width'), 0.45, 'base width not understood: assumed 0.45 m', assumptions),
      payload_kg: payload ?? readOr(readMass(all, 'payload'), 10, 'payload not understood: assumed 10 kg', assumptions),
    });

    switch (kind.robotType) {
      case 'arm': {
        const spec = arm();
        return armPlan(`${spec.dof}-DoF arm${spec.gripper ? ' with parallel gripper' : ''}`, spec, assumptions);
      }
      case 'differential_drive':
        return differentialDrivePlan('Differential-drive base', base(), assumptions);
      case 'mobile_manipulator': {
        const spec = arm();
        return mobileManipulatorPlan(`Mobile manipulator with ${spec.dof}-DoF arm`, base(spec.payload_kg * 4), spec, assumptions);
      }
    }
  }
}

function short(text: string | undefined): string {
  const t = (text ?? '').trim().replace(/\s+/g, ' ');
  return t.length > 40 ? `${t.slice(0, 40)}…` : t;
}

function readOr(value: number | undefined, fallback: number, assumption: string, assumptions: string[]): number {
  if (value !== undefined) return value;
  assumptions.push(assumption);
  return fallback;
}
