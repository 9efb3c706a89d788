/**
 * A small real ONNX model (obs[batch,4] -> Gemm -> action[batch,2]) encoded by onnx-proto,
 * for benches that publish models: published files are inspected (issue 40), so random bytes
 * named .onnx are refused. `producer` makes distinct files; `hidden` (default none) makes it
 * an MLP obs -> Gemm -> Tanh -> Gemm -> action with that many hidden units (24 bytes each).
 */
const { onnx } = require('onnx-proto');

function onnxModelObject(producer = 'bench', hidden = 0) {
  const FLOAT = onnx.TensorProto.DataType.FLOAT;
  const info = (name, width) => ({ name, type: { tensorType: { elemType: FLOAT, shape: { dim: [{ dimParam: 'batch' }, { dimValue: width }] } } } });
  const floats = (n) => Buffer.from(new Float32Array(n).map((_, i) => Math.sin(i) / 4).buffer);
  const layers = hidden
    ? {
        node: [
          { opType: 'Gemm', input: ['obs', 'w0', 'b0'], output: ['h0'] },
          { opType: 'Tanh', input: ['h0'], output: ['h1'] },
          { opType: 'Gemm', input: ['h1', 'w1', 'b'], output: ['action'] },
        ],
        initializer: [
          { name: 'w0', dims: [4, hidden], dataType: FLOAT, rawData: floats(4 * hidden) },
          { name: 'b0', dims: [hidden], dataType: FLOAT, rawData: floats(hidden) },
          { name: 'w1', dims: [hidden, 2], dataType: FLOAT, rawData: floats(hidden * 2) },
          { name: 'b', dims: [2], dataType: FLOAT, rawData: floats(2) },
        ],
      }
    : {
        node: [{ opType: 'Gemm', input: ['obs', 'w', 'b'], output: ['action'] }],
        initializer: [{ name: 'w', dims: [4, 2], dataType: FLOAT, rawData: floats(8) }, { name: 'b', dims: [2], dataType: FLOAT, rawData: floats(2) }],
      };
  return {
    irVersion: 8,
    opsetImport: [{ domain: '', version: 13 }],
    producerName: producer,
    graph: { name: 'policy', ...layers, input: [info('obs', 4)], output: [info('action', 2)] },
  };
}

function onnxModel(producer = 'bench', hidden = 0) {
  return Buffer.from(onnx.ModelProto.encode(onnx.ModelProto.fromObject(onnxModelObject(producer, hidden))).finish());
}

module.exports = { onnxModel, onnxModelObject };
