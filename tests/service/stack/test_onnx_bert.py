"""The ONNX → Hugging Face BERT conversion on hand-encoded protobuf: the wire-format
reader, the MatMul weight names recovered from their bias Add, the safetensors bytes
and the folder Ollama imports."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from service.stack.onnx_bert import (
    OnnxNode,
    bert_config,
    bert_tensors,
    read_onnx,
    write_bert_folder,
    write_safetensors,
)

# --- a minimal protobuf encoder (the reader's counterpart) ---


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _bytes(field: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _node(op_type: str, inputs: list[str], outputs: list[str], name: str = "") -> bytes:
    return (
        b"".join(_bytes(1, i) for i in inputs)
        + b"".join(_bytes(2, o) for o in outputs)
        + _bytes(3, name or f"/{op_type}")
        + _bytes(4, op_type)
    )


def _tensor(name: str, array: np.ndarray, *, packed_dims: bool = True) -> bytes:
    dims = (
        _bytes(1, b"".join(_varint(d) for d in array.shape))
        if packed_dims
        else b"".join(_int(1, d) for d in array.shape)
    )
    data_type = {np.dtype("<f4"): 1, np.dtype("<i8"): 7}[array.dtype]
    return dims + _int(2, data_type) + _bytes(8, name) + _bytes(9, array.tobytes())


def _model(nodes: list[bytes], initializers: list[bytes]) -> bytes:
    graph = (
        b"".join(_bytes(1, n) for n in nodes)
        + _bytes(2, "torch_jit")
        + b"".join(_bytes(5, t) for t in initializers)
    )
    # ir_version, producer_name, the graph, an opset_import: the reader keeps the graph only.
    return _int(1, 8) + _bytes(2, "pytorch") + _bytes(7, graph) + _bytes(8, _int(2, 14))


def _f32(values: list[float], shape: tuple[int, ...]) -> np.ndarray:
    return np.array(values, dtype="<f4").reshape(shape)


QUERY_BIAS = "encoder.layer.0.attention.self.query.bias"
# x @ W with W = [[1, 2, 3], [4, 5, 6]] ([in, out]), then + bias (bias first, as PyTorch
# exports it).
LINEAR = _model(
    [
        _node("MatMul", ["hidden", "onnx::MatMul_7"], ["/MatMul_output_0"]),
        _node("Add", [QUERY_BIAS, "/MatMul_output_0"], ["/Add_output_0"]),
    ],
    [
        _tensor("onnx::MatMul_7", _f32([1, 2, 3, 4, 5, 6], (2, 3))),
        _tensor(QUERY_BIAS, _f32([0.5, -1, 2], (3,)), packed_dims=False),
    ],
)


def test_read_onnx_nodes_and_initializers() -> None:
    graph = read_onnx(LINEAR)
    assert graph.nodes == (
        OnnxNode("MatMul", "/MatMul", ("hidden", "onnx::MatMul_7"), ("/MatMul_output_0",)),
        OnnxNode("Add", "/Add", (QUERY_BIAS, "/MatMul_output_0"), ("/Add_output_0",)),
    )
    assert list(graph.initializers) == ["onnx::MatMul_7", QUERY_BIAS]
    assert graph.initializers["onnx::MatMul_7"].tolist() == [[1, 2, 3], [4, 5, 6]]
    assert graph.initializers[QUERY_BIAS].tolist() == [0.5, -1, 2]
    assert graph.initializers[QUERY_BIAS].dtype == np.dtype("<f4")


def test_read_onnx_float_data_and_int64() -> None:
    # float_data (field 4) packed, instead of raw_data; a 300-long int64 needs 2-byte varints.
    floats = (
        _bytes(1, _varint(2)) + _int(2, 1) + _bytes(8, "f") + _bytes(4, struct.pack("<2f", 1.5, -2))
    )
    ints = _tensor("ids", np.arange(300, dtype="<i8"))
    graph = read_onnx(_model([], [floats, ints]))
    assert graph.initializers["f"].tolist() == [1.5, -2.0]
    assert graph.initializers["ids"].tolist() == list(range(300))


def test_read_onnx_refuses_other_data_types() -> None:
    doubles = _bytes(1, _varint(1)) + _int(2, 11) + _bytes(8, "d") + _bytes(9, b"\0" * 8)
    with pytest.raises(ValueError, match="unsupported ONNX data type 11"):
        read_onnx(_model([], [doubles]))


def test_matmul_weight_is_named_after_its_bias_and_transposed() -> None:
    tensors = bert_tensors(read_onnx(LINEAR))
    assert sorted(tensors) == [QUERY_BIAS, "encoder.layer.0.attention.self.query.weight"]
    weight = tensors["encoder.layer.0.attention.self.query.weight"]
    assert weight.tolist() == [[1, 4], [2, 5], [3, 6]]  # [out, in], like torch.nn.Linear
    assert weight.flags.c_contiguous


def test_bias_may_be_the_second_input_of_the_add() -> None:
    bias = "encoder.layer.3.output.dense.bias"
    model = _model(
        [
            _node("MatMul", ["h", "w"], ["m"]),
            _node("Add", ["m", bias], ["y"]),
        ],
        [_tensor("w", _f32([1, 2], (2, 1))), _tensor(bias, _f32([0], (1,)))],
    )
    assert bert_tensors(read_onnx(model))["encoder.layer.3.output.dense.weight"].tolist() == [
        [1, 2]
    ]


def test_matmul_without_a_bias_add_is_refused() -> None:
    model = _model(
        [_node("MatMul", ["h", "w"], ["m"]), _node("Mul", ["m", "m"], ["y"])],
        [_tensor("w", _f32([1, 2], (2, 1)))],
    )
    with pytest.raises(ValueError, match="not followed by one bias Add"):
        bert_tensors(read_onnx(model))


def test_write_safetensors_exact_bytes(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    # Given out of order: written by name, so the same tensors always give the same file.
    write_safetensors(path, {"b": _f32([1, 2], (2, 1)), "a": np.array([7], dtype="<i8")})
    header = (
        b'{"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},'
        b'"b":{"dtype":"F32","shape":[2,1],"data_offsets":[8,16]}}'
    )
    padding = b" " * (-len(header) % 8)
    assert path.read_bytes() == (
        struct.pack("<Q", len(header) + len(padding))
        + header
        + padding
        + struct.pack("<q", 7)
        + struct.pack("<2f", 1, 2)
    )
    assert not list(tmp_path.glob("*.partial"))


def tiny_bert_onnx(layers: int = 2) -> bytes:
    """A BERT-shaped graph: vocab 5, hidden 4, intermediate 8, 6 positions, 2 token types."""
    rng = np.random.default_rng(0)
    nodes, initializers = [], []

    def param(name: str, shape: tuple[int, ...]) -> None:
        initializers.append(_tensor(name, rng.standard_normal(shape).astype("<f4")))

    param("embeddings.word_embeddings.weight", (5, 4))
    param("embeddings.position_embeddings.weight", (6, 4))
    param("embeddings.token_type_embeddings.weight", (2, 4))
    for layer in range(layers):
        for linear, (n_in, n_out) in {
            "attention.self.query": (4, 4),
            "intermediate.dense": (4, 8),
        }.items():
            prefix = f"encoder.layer.{layer}.{linear}"
            weight = f"onnx::MatMul_{len(initializers)}"
            param(weight, (n_in, n_out))
            param(f"{prefix}.bias", (n_out,))
            nodes += [
                _node("MatMul", ["x", weight], [f"{prefix}/m"]),
                _node("Add", [f"{prefix}.bias", f"{prefix}/m"], [f"{prefix}/y"]),
            ]
    return _model(nodes, initializers)


def test_bert_config_reads_sizes_off_the_tensors() -> None:
    config = bert_config(bert_tensors(read_onnx(tiny_bert_onnx())), attention_heads=2)
    assert {
        key: config[key]
        for key in (
            "architectures",
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "intermediate_size",
            "vocab_size",
            "max_position_embeddings",
            "type_vocab_size",
            "layer_norm_eps",
        )
    } == {
        "architectures": ["BertModel"],
        "hidden_size": 4,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 8,
        "vocab_size": 5,
        "max_position_embeddings": 6,
        "type_vocab_size": 2,
        "layer_norm_eps": 1e-12,
    }


def test_bert_folder_is_deterministic_and_cls_pooled(tmp_path: Path) -> None:
    onnx = tiny_bert_onnx()
    for folder in ("one", "two"):
        write_bert_folder(tmp_path / folder, onnx=onnx, tokenizer_json=b"{}", attention_heads=2)
    one, two = tmp_path / "one", tmp_path / "two"
    assert sorted(p.relative_to(one).as_posix() for p in one.rglob("*") if p.is_file()) == [
        "1_Pooling/config.json",
        "config.json",
        "model.safetensors",
        "modules.json",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    assert (one / "model.safetensors").read_bytes() == (two / "model.safetensors").read_bytes()
    assert (one / "tokenizer.json").read_bytes() == b"{}"
    pooling = json.loads((one / "1_Pooling/config.json").read_text())
    assert (pooling["pooling_mode_cls_token"], pooling["pooling_mode_mean_tokens"]) == (
        True,
        False,
    )
    assert pooling["word_embedding_dimension"] == 4
    modules = json.loads((one / "modules.json").read_text())
    assert [(m["type"].rpartition(".")[2], m["path"]) for m in modules] == [
        ("Transformer", ""),
        ("Pooling", "1_Pooling"),
        ("Normalize", "2_Normalize"),
    ]
    tokenizer_config = json.loads((one / "tokenizer_config.json").read_text())
    assert (tokenizer_config["cls_token"], tokenizer_config["sep_token"]) == ("[CLS]", "[SEP]")
