import { InspectionError, Inspection, InspectionProblem } from './inspection';
import type { InspectionContext, RangedFile } from './ranged-file';
import { inspectGzip, inspectJpeg, inspectPcd, inspectPly, inspectPng, inspectStl, inspectTar, inspectTflite, inspectUsd } from './formats/headers';
import { inspectDb3 } from './formats/db3';
import { inspectHdf5 } from './formats/hdf5';
import { inspectMcap } from './formats/mcap';
import { inspectNpy } from './formats/npy';
import { inspectOnnx } from './formats/onnx';
import { inspectParquet } from './formats/parquet';
import { inspectPytorch } from './formats/pickle';
import { inspectRosbag } from './formats/rosbag';
import { inspectCollada, inspectSdf, inspectUrdf, inspectXacro } from './formats/robot-xml';
import { inspectSafetensors } from './formats/safetensors';
import { inspectTfrecord } from './formats/tfrecord';
import { inspectCsv, inspectJson, inspectJsonl, inspectObj, inspectYaml } from './formats/text';
import { inspectMatroska, inspectMp4 } from './formats/video';
import { inspectZip } from './formats/zip';

type Inspector = (file: RangedFile, context?: InspectionContext) => Promise<Inspection>;

/** One inspector per extension; what each one checks and shows is listed in docs/catalog.md. */
const INSPECTORS: Record<string, { what: string; inspect: Inspector }> = {
  '.onnx': { what: 'an ONNX model', inspect: inspectOnnx },
  '.safetensors': { what: 'a safetensors file', inspect: inspectSafetensors },
  '.pt': { what: 'a PyTorch checkpoint', inspect: inspectPytorch },
  '.pth': { what: 'a PyTorch checkpoint', inspect: inspectPytorch },
  '.ckpt': { what: 'a PyTorch checkpoint', inspect: inspectPytorch },
  '.urdf': { what: 'a URDF robot description', inspect: inspectUrdf },
  '.xacro': { what: 'a xacro robot description', inspect: inspectXacro },
  '.sdf': { what: 'an SDFormat description', inspect: inspectSdf },
  '.dae': { what: 'a COLLADA document', inspect: inspectCollada },
  '.zip': { what: 'a zip archive', inspect: (f) => inspectZip(f) },
  '.npz': { what: 'a NumPy .npz archive', inspect: (f) => inspectZip(f, 'npz') },
  '.usdz': { what: 'a USDZ package', inspect: (f) => inspectZip(f, 'usdz') },
  '.tar': { what: 'a tar archive', inspect: inspectTar },
  '.gz': { what: 'a gzip file', inspect: inspectGzip },
  '.tgz': { what: 'a gzip-compressed tar archive', inspect: inspectGzip },
  '.h5': { what: 'an HDF5 file', inspect: inspectHdf5 },
  '.hdf5': { what: 'an HDF5 file', inspect: inspectHdf5 },
  '.parquet': { what: 'a Parquet file', inspect: inspectParquet },
  '.mcap': { what: 'an MCAP recording', inspect: inspectMcap },
  '.bag': { what: 'a ROS 1 bag', inspect: inspectRosbag },
  '.db3': { what: 'a ROS 2 bag (SQLite)', inspect: inspectDb3 },
  '.npy': { what: 'a NumPy .npy array', inspect: inspectNpy },
  '.tfrecord': { what: 'a TFRecord file', inspect: inspectTfrecord },
  '.mp4': { what: 'an MP4 video', inspect: inspectMp4 },
  '.webm': { what: 'a WebM video', inspect: inspectMatroska },
  '.mkv': { what: 'a Matroska video', inspect: inspectMatroska },
  '.png': { what: 'a PNG image', inspect: inspectPng },
  '.jpg': { what: 'a JPEG image', inspect: inspectJpeg },
  '.jpeg': { what: 'a JPEG image', inspect: inspectJpeg },
  '.tflite': { what: 'a TensorFlow Lite model', inspect: inspectTflite },
  '.stl': { what: 'an STL mesh', inspect: inspectStl },
  '.ply': { what: 'a PLY mesh', inspect: inspectPly },
  '.pcd': { what: 'a PCD point cloud', inspect: inspectPcd },
  '.obj': { what: 'a Wavefront OBJ mesh', inspect: inspectObj },
  '.usd': { what: 'a USD layer', inspect: inspectUsd },
  '.usda': { what: 'a USD layer', inspect: inspectUsd },
  '.json': { what: 'a JSON document', inspect: inspectJson },
  '.jsonl': { what: 'a JSON Lines file', inspect: inspectJsonl },
  '.csv': { what: 'a CSV file', inspect: inspectCsv },
  '.yaml': { what: 'a YAML document', inspect: inspectYaml },
  '.yml': { what: 'a YAML document', inspect: inspectYaml },
};

/** Lowercase extension of a name, with its dot; "" when it has none. */
function extension(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot).toLowerCase() : '';
}

export type InspectionOutcome = { ok: true; inspection: Inspection } | { ok: false; problem: InspectionProblem };

/**
 * Inspects one file by its name's extension. A format with no inspector (a TensorRT
 * .engine) passes as "opaque". A failure names the file and what it is not:
 * `"policy.onnx" is not an ONNX model: it has no graph ...`. Storage faults are not
 * inspection results: they are thrown.
 */
export async function inspectFile(file: RangedFile, context?: InspectionContext): Promise<InspectionOutcome> {
  const inspector = INSPECTORS[extension(file.name)];
  if (!inspector) return { ok: true, inspection: { format: 'opaque' } };
  try {
    return { ok: true, inspection: await inspector.inspect(file, context) };
  } catch (error) {
    if (error instanceof InspectionError) {
      const message = error.code === 'invalid_format' ? `"${file.name}" is not ${inspector.what}: ${error.message}` : `"${file.name}" was refused: ${error.message}`;
      return { ok: false, problem: { code: error.code, message } };
    }
    // A parser that overflowed its stack or choked on hostile bytes: the file fails, the service does not.
    if (error instanceof RangeError) {
      return { ok: false, problem: { code: 'invalid_format', message: `"${file.name}" is not ${inspector.what}: ${error.message}` } };
    }
    throw error;
  }
}
