"""A BERT encoder exported to ONNX, rewritten as the Hugging Face folder Ollama imports.

Ollama cannot import ONNX, but its BERT converter reads `model.safetensors` with the
Hugging Face parameter names plus `config.json`, the tokenizer files, `modules.json`
and the pooling config. An ONNX file is a protobuf message; the few fields needed here
(the graph's nodes and initializers) are read directly from the wire format, so no
`onnx` package is involved.

PyTorch's exporter keeps the names of biases and LayerNorm parameters but renames the
weights it feeds to `MatMul` (`onnx::MatMul_1234`), stored as `[in, out]`. Each such
weight gets the name of the bias its `MatMul` is added to (`….bias` → `….weight`) and
is transposed to the `[out, in]` layout of `torch.nn.Linear`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "OnnxGraph",
    "OnnxNode",
    "bert_config",
    "bert_tensors",
    "read_onnx",
    "write_bert_folder",
    "write_safetensors",
]

# TensorProto.DataType → numpy dtype and safetensors dtype.
_DTYPES = {1: ("<f4", "F32"), 6: ("<i4", "I32"), 7: ("<i8", "I64"), 10: ("<f2", "F16")}
_SAFETENSORS_DTYPES = dict(_DTYPES.values())


@dataclass(frozen=True)
class OnnxNode:
    op_type: str
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class OnnxGraph:
    nodes: tuple[OnnxNode, ...]
    initializers: dict[str, NDArray[np.generic]]


def _varint(data: memoryview, index: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[index]
        index += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, index


def _fields(data: memoryview) -> Iterator[tuple[int, int | memoryview]]:
    """(field number, value) of a message: an int for varints, a view for the rest."""
    index = 0
    while index < len(data):
        key, index = _varint(data, index)
        wire = key & 7
        if wire == 0:
            value, index = _varint(data, index)
            yield key >> 3, value
            continue
        if wire == 2:
            size, index = _varint(data, index)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield key >> 3, data[index : index + size]
        index += size


def _text(value: int | memoryview) -> str:
    if not isinstance(value, memoryview):
        raise ValueError("a string field holds a varint")
    return bytes(value).decode()


def _node(data: memoryview) -> OnnxNode:
    parts: dict[int, list[str]] = {1: [], 2: [], 3: [], 4: []}
    for number, value in _fields(data):
        if number in parts:
            parts[number].append(_text(value))
    return OnnxNode(
        op_type="".join(parts[4]),
        name="".join(parts[3]),
        inputs=tuple(parts[1]),
        outputs=tuple(parts[2]),
    )


def _tensor(data: memoryview) -> tuple[str, NDArray[np.generic]]:
    dims: list[int] = []
    name, data_type = "", 0
    raw: memoryview | None = None
    floats = bytearray()
    for number, value in _fields(data):
        if number == 1 and isinstance(value, int):
            dims.append(value)
        elif number == 1 and isinstance(value, memoryview):  # packed dims
            index = 0
            while index < len(value):
                dim, index = _varint(value, index)
                dims.append(dim)
        elif number == 2 and isinstance(value, int):
            data_type = value
        elif number == 4 and isinstance(value, memoryview):  # float_data (packed or not)
            floats += value
        elif number == 8:
            name = _text(value)
        elif number == 9 and isinstance(value, memoryview):
            raw = value
    if data_type not in _DTYPES:
        raise ValueError(f"initializer {name!r} has unsupported ONNX data type {data_type}")
    if raw is None and data_type != 1:
        raise ValueError(f"initializer {name!r} has no raw_data")
    buffer = raw if raw is not None else memoryview(floats)
    return name, np.frombuffer(buffer, dtype=_DTYPES[data_type][0]).reshape(dims)


def read_onnx(data: bytes) -> OnnxGraph:
    """The nodes and initializers of an ONNX ModelProto (arrays are views into `data`)."""
    nodes: list[OnnxNode] = []
    initializers: dict[str, NDArray[np.generic]] = {}
    for number, graph in _fields(memoryview(data)):
        if number != 7 or not isinstance(graph, memoryview):
            continue
        for field, value in _fields(graph):
            if field == 1 and isinstance(value, memoryview):
                nodes.append(_node(value))
            elif field == 5 and isinstance(value, memoryview):
                name, array = _tensor(value)
                initializers[name] = array
    return OnnxGraph(nodes=tuple(nodes), initializers=initializers)


def bert_tensors(graph: OnnxGraph) -> dict[str, NDArray[np.generic]]:
    """The initializers under their Hugging Face names, MatMul weights as `[out, in]`."""
    consumers: dict[str, list[OnnxNode]] = {}
    for node in graph.nodes:
        for name in node.inputs:
            consumers.setdefault(name, []).append(node)
    tensors: dict[str, NDArray[np.generic]] = {}
    for name, array in graph.initializers.items():
        matmuls = [node for node in consumers.get(name, []) if node.op_type == "MatMul"]
        target = name if not matmuls else _linear_weight_name(graph, consumers, name, matmuls)
        if target in tensors:
            raise ValueError(f"two initializers map to {target!r}")
        tensors[target] = array if not matmuls else np.ascontiguousarray(array.T)
    return tensors


def _linear_weight_name(
    graph: OnnxGraph, consumers: dict[str, list[OnnxNode]], name: str, matmuls: list[OnnxNode]
) -> str:
    """The name of the bias added to the product with `name`, `.bias` → `.weight`."""
    if len(matmuls) != 1 or matmuls[0].inputs[1:] != (name,):
        raise ValueError(f"{name!r} is not the weight of a single MatMul")
    biases = [
        other
        for node in consumers.get(matmuls[0].outputs[0], [])
        if node.op_type == "Add"
        for other in node.inputs
        if other in graph.initializers and other.endswith(".bias")
    ]
    if len(biases) != 1:
        raise ValueError(f"the MatMul of {name!r} is not followed by one bias Add")
    return biases[0].removesuffix("bias") + "weight"


def write_safetensors(path: Path, tensors: dict[str, NDArray[np.generic]]) -> None:
    """Write `tensors` as safetensors, in name order, so equal input gives equal bytes."""
    arrays = {
        name: np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        for name, array in sorted(tensors.items())
    }
    header: dict[str, object] = {}
    offset = 0
    for name, array in arrays.items():
        size = array.nbytes
        header[name] = {
            "dtype": _SAFETENSORS_DTYPES[array.dtype.str],
            "shape": list(array.shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as stream:
        stream.write(len(encoded).to_bytes(8, "little"))
        stream.write(encoded)
        for array in arrays.values():
            stream.write(array.data)
    os.replace(partial, path)


def bert_config(
    tensors: dict[str, NDArray[np.generic]], *, attention_heads: int, layer_norm_eps: float = 1e-12
) -> dict[str, object]:
    """`config.json` of a `BertModel`, its sizes read off the tensors' shapes."""
    vocab, hidden = tensors["embeddings.word_embeddings.weight"].shape
    layers = sum(1 for name in tensors if name.endswith(".attention.self.query.weight"))
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": attention_heads,
        "intermediate_size": tensors["encoder.layer.0.intermediate.dense.weight"].shape[0],
        "vocab_size": vocab,
        "max_position_embeddings": tensors["embeddings.position_embeddings.weight"].shape[0],
        "type_vocab_size": tensors["embeddings.token_type_embeddings.weight"].shape[0],
        "layer_norm_eps": layer_norm_eps,
        "hidden_act": "gelu",
        "pad_token_id": 0,
    }


def write_bert_folder(
    target: Path, *, onnx: bytes, tokenizer_json: bytes, attention_heads: int
) -> None:
    """Write the Hugging Face / sentence-transformers folder of a CLS-pooled, normalized
    BERT encoder: weights, config, tokenizer, modules and pooling config."""
    tensors = bert_tensors(read_onnx(onnx))
    config = bert_config(tensors, attention_heads=attention_heads)
    (target / "1_Pooling").mkdir(parents=True, exist_ok=True)
    write_safetensors(target / "model.safetensors", tensors)
    (target / "tokenizer.json").write_bytes(tokenizer_json)
    documents: dict[str, object] = {
        "config.json": config,
        "tokenizer_config.json": {
            "tokenizer_class": "BertTokenizer",
            "do_lower_case": True,
            "model_max_length": config["max_position_embeddings"],
            "cls_token": "[CLS]",
            "sep_token": "[SEP]",
            "pad_token": "[PAD]",
            "unk_token": "[UNK]",
            "mask_token": "[MASK]",
        },
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {
                "idx": 1,
                "name": "1",
                "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling",
            },
            {
                "idx": 2,
                "name": "2",
                "path": "2_Normalize",
                "type": "sentence_transformers.models.Normalize",
            },
        ],
        "1_Pooling/config.json": {
            "word_embedding_dimension": config["hidden_size"],
            "pooling_mode_cls_token": True,
            "pooling_mode_mean_tokens": False,
            "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False,
        },
    }
    for relative, document in documents.items():
        (target / relative).write_text(json.dumps(document, indent=2) + "\n")
