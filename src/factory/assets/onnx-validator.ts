import * as ort from 'onnxruntime-web';
import { check } from './invalid-artifact';
import type { PolicyPlan } from './plan';

// One thread: the WebAssembly build would otherwise spawn workers per session, and a
// validation of a small MLP gains nothing from them on a shared machine.
ort.env.wasm.numThreads = 1;

/**
 * Loads the model in onnxruntime (WebAssembly build: it installs from npm with no native
 * download) and runs it on a sample batch of two observations: the names and shapes must
 * be the plan's and every action finite. A model that only looks right fails here.
 */
export async function validatePolicyModel(bytes: Uint8Array, plan: PolicyPlan): Promise<void> {
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(bytes);
  } catch (error) {
    check(false, `the ONNX model does not load: ${(error as Error).message}`);
  }
  try {
    check(session.inputNames.length === 1 && session.inputNames[0] === plan.observation.tensor, `the model's input is ${session.inputNames.join(', ')}, not ${plan.observation.tensor}`);
    check(session.outputNames.length === 1 && session.outputNames[0] === plan.action.tensor, `the model's output is ${session.outputNames.join(', ')}, not ${plan.action.tensor}`);
    const batch = 2;
    const sample = new Float32Array(batch * plan.observation.size).map((_, i) => Math.sin(i + 1));
    const result = await session.run({ [plan.observation.tensor]: new ort.Tensor('float32', sample, [batch, plan.observation.size]) });
    const action = result[plan.action.tensor];
    check(action && action.dims.length === 2 && action.dims[0] === batch && action.dims[1] === plan.action.size, `the action has shape [${action?.dims.join(', ')}], not [${batch}, ${plan.action.size}]`);
    check(Array.from(action.data as Float32Array).every(Number.isFinite), 'the model produced a non-finite action');
  } finally {
    await session.release();
  }
}
