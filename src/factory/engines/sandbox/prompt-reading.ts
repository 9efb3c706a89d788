/**
 * The sandbox engine's readers: small, explainable regular expressions over the prompt and
 * answers. Each returns undefined when the text does not say, so the caller decides between
 * asking (analysis) and a stated default (planning).
 */
export type RobotType = 'arm' | 'differential_drive' | 'mobile_manipulator';
export type ReadKind = { kind: 'policy_network' } | { kind: 'robot_description'; robotType: RobotType };

const WORD_NUMBERS: Record<string, number> = {
  one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
};
const NUMBER = `(\\d+(?:\\.\\d+)?|${Object.keys(WORD_NUMBERS).join('|')})`;

function toNumber(text: string): number {
  return WORD_NUMBERS[text.toLowerCase()] ?? Number(text);
}

export function readKind(text: string): ReadKind | undefined {
  const t = text.toLowerCase();
  // A policy "for a gripper" is still a policy: the network words win over the robot words.
  if (/\b(policy|policies|onnx|neural|network|controller|mlp|reinforcement|rl)\b/.test(t)) return { kind: 'policy_network' };
  const arm = /\b(arm|manipulator)\b/.test(t);
  const base = /\b(differential|diff[- ]?drive|wheeled|mobile base|rover|two[- ]wheel|agv|base)\b/.test(t);
  if (/\bmobile manipulator\b/.test(t) || (arm && base)) return { kind: 'robot_description', robotType: 'mobile_manipulator' };
  if (base) return { kind: 'robot_description', robotType: 'differential_drive' };
  if (arm) return { kind: 'robot_description', robotType: 'arm' };
  return undefined;
}

/** "6-DoF", "six axis", "7 degrees of freedom", "5 joints". */
export function readDof(text: string): number | undefined {
  const t = text.toLowerCase();
  const match = new RegExp(`\\b${NUMBER}[- ]?(?:dof|d\\.o\\.f|degrees? of freedom|axis|axes|joints?)\\b`).exec(t);
  const bare = /^\s*(\d+|[a-z]+)\s*\.?\s*$/.exec(t);
  const value = match ? toNumber(match[1]) : bare ? toNumber(bare[1]) : NaN;
  return Number.isInteger(value) && value >= 1 && value <= 12 ? value : undefined;
}

const METRES: Record<string, number> = { m: 1, cm: 0.01, mm: 0.001 };

/** A length next to a word ("0.9 m reach", "reach of 90 cm"), in metres. */
export function readLength(text: string, word: string): number | undefined {
  const t = text.toLowerCase();
  // The word may be an alternation ("long|length"): grouped, so it cannot split the pattern.
  const after = new RegExp(`${NUMBER}\\s*(mm|cm|m)\\b[^.,;]{0,12}?\\b(?:${word})`).exec(t);
  const before = new RegExp(`\\b(?:${word})\\b[^.,;\\d]{0,20}?${NUMBER}\\s*(mm|cm|m)\\b`).exec(t);
  const m = after ?? before;
  if (!m) return undefined;
  const value = toNumber(m[1]) * METRES[m[2]];
  return value > 0 && value <= 20 ? value : undefined;
}

/** A mass next to a word ("5 kg payload", "payload of 500 g"), in kilograms. */
export function readMass(text: string, word: string): number | undefined {
  const t = text.toLowerCase();
  const after = new RegExp(`${NUMBER}\\s*(kg|g)\\b[^.,;]{0,12}?\\b(?:${word})`).exec(t);
  const before = new RegExp(`\\b(?:${word})\\b[^.,;\\d]{0,20}?${NUMBER}\\s*(kg|g)\\b`).exec(t);
  const m = after ?? before;
  if (!m) return undefined;
  const value = toNumber(m[1]) * (m[2] === 'g' ? 0.001 : 1);
  return value > 0 && value <= 1000 ? value : undefined;
}

export const mentions = (text: string, pattern: RegExp) => pattern.test(text.toLowerCase());

/** "two hidden layers of 128", "128x128", "layers 256, 256": the hidden widths. */
export function readHiddenLayers(text: string): number[] | undefined {
  const t = text.toLowerCase();
  const grid = /\b(\d{1,4})\s*x\s*(\d{1,4})(?:\s*x\s*(\d{1,4}))?\b/.exec(t);
  if (grid) return grid.slice(1).filter(Boolean).map(Number);
  const repeated = new RegExp(`\\b${NUMBER}\\s+(?:hidden\\s+)?layers?\\s+of\\s+(\\d{1,4})\\b`).exec(t);
  if (repeated) return Array(toNumber(repeated[1])).fill(Number(repeated[2]));
  return undefined;
}
