/**
 * A small real ONNX model (obs[batch,4] -> Gemm -> action[batch,2]) encoded by onnx-proto,
 * for benches that publish models: published files are inspected (issue 40), so random bytes
 * named .onnx are refused. `producer` makes distinct files.
 */
const { onnx } = require('onnx-proto');

function onnxModel(producer = 'bench') {
  const FLOAT = onnx.TensorProto.DataType.FLOAT;
  const info = (name, width) => ({ name, type: { tensorType: { elemType: FLOAT, shape: { dim: [{ dimParam: 'batch' }, { dimValue: width }] } } } });
  const floats = (n) => Buffer.from(new Float32Array(n).map((_, i) => Math.sin(i) / 4).buffer);
  const model = {
    irVersion: 8,
    opsetImport: [{ domain: '', version: 13 }],
    producerName: producer,
    graph: {
      name: 'policy',
      node: [{ opType: 'Gemm', input: ['obs', 'w', 'b'], output: ['action'] }],
      initializer: [{ name: 'w', dims: [4, 2], dataType: FLOAT, rawData: floats(8) }, { name: 'b', dims: [2], dataType: FLOAT, rawData: floats(2) }],
      input: [info('obs', 4)],
      output: [info('action', 2)],
    },
  };
  return Buffer.from(onnx.ModelProto.encode(onnx.ModelProto.fromObject(model)).finish());
}

module.exports = { onnxModel };
