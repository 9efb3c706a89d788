import * as ort from 'onnxruntime-web';
import { DEFAULT_LIMITS, Inspection, InspectionError } from '../../inspection/inspection';
import { inspectOnnx } from '../../inspection/formats/onnx';
import { RangedFile } from '../../inspection/ranged-file';
import { check } from './invalid-artifact';
import type { PolicyPlan } from './plan';


/**
 * Inspects the model as every published .onnx is inspected (which loads it in onnxruntime,
 * WebAssembly build), checks its input and output are the plan's, and runs it on a sample batch of two observations: the names and shapes must
 * be the plan's and every action finite. A model that only looks right fails here.
 */
export async function validatePolicyModel(bytes: Uint8Array, plan: PolicyPlan): Promise<void> {
  // The format's own check first: the ONNX inspector every published .onnx goes through (it loads the model in onnxruntime too).
  let inspection: Inspection;
  try {
    inspection = await inspectOnnx(RangedFile.ofBytes('policy.onnx', bytes, DEFAULT_LIMITS));
  } catch (error) {
    if (error instanceof InspectionError) check(false, `the ONNX model does not load: ${error.message}`);
    throw error;
  }
  const inputs = (inspection.inputs as { name: string }[]).map((i) => i.name);
  const outputs = (inspection.outputs as { name: string }[]).map((o) => o.name);
  check(inputs.length === 1 && inputs[0] === plan.observation.tensor, `the model's input is ${inputs.join(', ')}, not ${plan.observation.tensor}`);
  check(outputs.length === 1 && outputs[0] === plan.action.tensor, `the model's output is ${outputs.join(', ')}, not ${plan.action.tensor}`);
  const session = await ort.InferenceSession.create(bytes);
  try {
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
