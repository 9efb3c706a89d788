import { onnx } from 'onnx-proto';
import type { PolicyPlan } from './plan';
import { seededRandom } from '../../platform/seeded-random';

const FLOAT = onnx.TensorProto.DataType.FLOAT;
/** Opset 13 has every operator used here and loads in every onnxruntime of the last years. */
const OPSET = 13;
const IR_VERSION = 8;

/** The layer widths from observation to action: [obs, ...hidden, act]. */
export function layerWidths(plan: PolicyPlan): number[] {
  return [plan.observation.size, ...plan.hidden_layers, plan.action.size];
}

function tensorInfo(name: string, width: number): onnx.IValueInfoProto {
  // The batch dimension is symbolic so callers may run one observation or many.
  return {
    name,
    type: { tensorType: { elemType: FLOAT, shape: { dim: [{ dimParam: 'batch' }, { dimValue: width }] } } },
  };
}

function floatTensor(name: string, dims: number[], values: Float32Array): onnx.ITensorProto {
  // raw_data is little-endian float32, fixed by the ONNX spec whatever the host.
  const raw = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => raw.writeFloatLE(v, i * 4));
  return { name, dims, dataType: FLOAT, rawData: raw };
}

/**
 * Builds the policy as an MLP: Gemm (+ Tanh or Relu) per hidden layer and a last Gemm to
 * the action. Weights are Xavier-uniform from a PRNG seeded by the plan, biases zero: a
 * deterministic starting point to fine-tune, not a trained policy.
 */
export function buildPolicyModel(plan: PolicyPlan, docString = ''): Uint8Array {
  const random = seededRandom(plan.seed);
  const widths = layerWidths(plan);
  const nodes: onnx.INodeProto[] = [];
  const initializer: onnx.ITensorProto[] = [];
  let input = plan.observation.tensor;
  for (let i = 0; i < widths.length - 1; i++) {
    const [fanIn, fanOut] = [widths[i], widths[i + 1]];
    const bound = Math.sqrt(6 / (fanIn + fanOut));
    const weights = new Float32Array(fanIn * fanOut).map(() => (random() * 2 - 1) * bound);
    initializer.push(floatTensor(`fc${i}.weight`, [fanIn, fanOut], weights));
    initializer.push(floatTensor(`fc${i}.bias`, [fanOut], new Float32Array(fanOut)));
    const last = i === widths.length - 2;
    const linear = last ? plan.action.tensor : `fc${i}.out`;
    nodes.push({ name: `fc${i}`, opType: 'Gemm', input: [input, `fc${i}.weight`, `fc${i}.bias`], output: [linear] });
    input = linear;
    if (!last) {
      const activated = `act${i}.out`;
      nodes.push({ name: `act${i}`, opType: plan.activation === 'tanh' ? 'Tanh' : 'Relu', input: [linear], output: [activated] });
      input = activated;
    }
  }
  const model: onnx.IModelProto = {
    irVersion: IR_VERSION,
    opsetImport: [{ domain: '', version: OPSET }],
    producerName: 'svc-factory',
    producerVersion: '1',
    docString,
    graph: {
      name: plan.title,
      node: nodes,
      initializer,
      input: [tensorInfo(plan.observation.tensor, plan.observation.size)],
      output: [tensorInfo(plan.action.tensor, plan.action.size)],
    },
    // The meaning of each slice of the vectors travels with the model.
    metadataProps: [
      { key: 'observation_fields', value: JSON.stringify(plan.observation.fields) },
      { key: 'action_fields', value: JSON.stringify(plan.action.fields) },
    ],
  };
  return onnx.ModelProto.encode(onnx.ModelProto.fromObject(model)).finish();
}
