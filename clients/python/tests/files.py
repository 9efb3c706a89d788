"""Real files of the formats the service inspects on publish (it opens every published file:
docs/catalog.md), written to each format's spec with the standard library only."""

from __future__ import annotations

import json

FLOAT = 1  # onnx.TensorProto.DataType.FLOAT


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(value)) + value


def _value_info(name: str, width: int) -> bytes:
    """onnx.ValueInfoProto: a float tensor of shape [width]."""
    shape = _bytes(1, _int(1, width))  # TensorShapeProto.dim { dim_value }
    tensor = _int(1, FLOAT) + _bytes(2, shape)  # TypeProto.Tensor { elem_type, shape }
    return _bytes(1, name.encode()) + _bytes(2, _bytes(1, tensor))  # name, type { tensor_type }


def onnx_model(weights: bytes) -> bytes:
    """An ONNX model (onnx.proto3, IR 8, opset 13) computing y = x + w, whose initializer w
    holds `weights` (padded to whole float32s): any bytes make a model that loads."""
    raw = weights + b"\0" * (-len(weights) % 4)
    width = max(len(raw) // 4, 1)
    raw = raw or b"\0" * 4
    initializer = _int(1, width) + _int(2, FLOAT) + _bytes(8, b"w") + _bytes(9, raw)
    node = _bytes(1, b"x") + _bytes(1, b"w") + _bytes(2, b"y") + _bytes(4, b"Add")
    graph = (_bytes(1, node) + _bytes(2, b"policy") + _bytes(5, initializer)
             + _bytes(11, _value_info("x", width)) + _bytes(12, _value_info("y", width)))
    opset = _int(2, 13)  # OperatorSetIdProto { version } (the default domain)
    return _int(1, 8) + _bytes(2, b"robotics-marketplace-python-tests") + _bytes(7, graph) + _bytes(8, opset)


def jsonl_episode(index: int, steps: int, noise: bytes) -> bytes:
    """An episode as JSON Lines, one object a step."""
    return b"".join(json.dumps({"episode": index, "step": s, "noise": noise.hex()}).encode() + b"\n" for s in range(steps))
