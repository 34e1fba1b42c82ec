"""Tiny stand-ins for Memora's two fastembed models, built offline with ``onnx`` and ``tokenizers``.

The real models download from Hugging Face, which these machines cannot reach. The stand-ins
are written into a fastembed cache folder in the Hugging Face hub's layout
(``models--<org>--<repo>/snapshots/<revision>/``) under the repositories fastembed looks up
for Memora's model names, so fastembed's own loading, tokenising, pooling and SPLADE code
runs on them unchanged, with no download (``HF_HUB_OFFLINE=1``).

- The dense model has BERT's inputs (``input_ids``, ``attention_mask``, ``token_type_ids``)
  and output (``last_hidden_state``, 384 wide as the real model). A word's hidden state is
  its concept vector plus the masked mean of the whole text's, so both a first-token
  (``[CLS]``) pooling and a mean pooling see the whole text. Words of one concept (``lives``,
  ``resides``, ``home``) point the same way: the dense search knows synonyms.
- The sparse model outputs SPLADE logits over the vocabulary: each content word lights its
  own entry, function words and special tokens none. The sparse search is lexical.

Words outside :data:`VOCABULARY` are ``[UNK]``, which carries no meaning in either model.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

DENSE_WIDTH = 384
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
#: Words of one concept share a dense direction.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "dwelling": ("live", "lives", "resides", "home", "house", "apartment", "moved"),
    "place": ("oslo", "paris", "berlin", "city", "town"),
    "work": ("works", "job", "bakery", "office", "employer", "engineer"),
    "food": ("likes", "pizza", "pasta", "eats", "food", "cooking", "allergic", "peanuts"),
    "pet": ("dog", "cat", "pet", "puppy", "walks"),
    "music": ("music", "concert", "guitar", "song", "band", "plays"),
    "travel": ("trip", "flight", "travel", "visit", "holiday"),
}
FUNCTION_WORDS = (
    "where", "does", "do", "she", "he", "her", "his", "in", "at", "a", "the", "to", "and",
    "is", "of", "with", "what", "who", "on", "for", "user", "agent",
)  # fmt: skip
VOCABULARY: tuple[str, ...] = (
    *SPECIAL,
    *(word for words in CONCEPTS.values() for word in words),
    *FUNCTION_WORDS,
)
_CONCEPT_DIMS = len(CONCEPTS) + 1  # the last one is the special tokens' shared bias
_WORD_DIMS = 8  # a word's own small component, so that synonyms are close but not equal
_OPSET = 17


def _token_ids() -> dict[str, int]:
    return {word: index for index, word in enumerate(VOCABULARY)}


def dense_table() -> np.ndarray:
    """Each word's embedding: its concept, plus a little of itself; special tokens a bias."""
    table = np.zeros((len(VOCABULARY), _CONCEPT_DIMS + _WORD_DIMS), dtype=np.float32)
    ids = _token_ids()
    for concept, (_, words) in enumerate(CONCEPTS.items()):
        for word in words:
            table[ids[word], concept] = 1.0
            table[ids[word], _CONCEPT_DIMS + ids[word] % _WORD_DIMS] = 0.35
    for token in ("[CLS]", "[SEP]"):
        table[ids[token], _CONCEPT_DIMS - 1] = 0.05
    return table


def sparse_weights() -> np.ndarray:
    """The SPLADE logit a token gives its own vocabulary entry: content words only."""
    weights = np.zeros(len(VOCABULARY), dtype=np.float32)
    ids = _token_ids()
    for words in CONCEPTS.values():
        for word in words:
            weights[ids[word]] = 1.5
    return weights


def _ids_input(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])


def _model(nodes: list[onnx.NodeProto], inputs: list[str], output: onnx.ValueInfoProto,
           initializers: dict[str, np.ndarray]) -> bytes:  # fmt: skip
    graph = helper.make_graph(
        nodes,
        "standin",
        [_ids_input(name) for name in inputs],
        [output],
        initializer=[numpy_helper.from_array(value, name) for name, value in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    serialized: bytes = model.SerializeToString()
    return serialized


def dense_model() -> bytes:
    """``last_hidden_state[b, t] = table[id_t] + masked mean of table[ids] + types[type_t]``."""
    table = dense_table()
    width = table.shape[1]
    node = helper.make_node
    nodes = [
        node("Gather", ["table", "input_ids"], ["tokens"]),
        node("Cast", ["attention_mask"], ["mask_float"], to=TensorProto.FLOAT),
        node("Unsqueeze", ["mask_float", "axis_2"], ["mask"]),
        node("Mul", ["tokens", "mask"], ["masked"]),
        node("ReduceSum", ["masked", "axis_1"], ["summed"], keepdims=1),
        node("ReduceSum", ["mask", "axis_1"], ["count"], keepdims=1),
        node("Div", ["summed", "count"], ["context"]),
        node("Gather", ["types", "token_type_ids"], ["type_rows"]),
        node("Add", ["tokens", "context"], ["with_context"]),
        node("Add", ["with_context", "type_rows"], ["narrow"]),
        node("Pad", ["narrow", "pads"], ["last_hidden_state"]),
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", DENSE_WIDTH]
    )
    initializers = {
        "table": table,
        "types": np.zeros((2, width), dtype=np.float32),
        "axis_1": np.array([1], dtype=np.int64),
        "axis_2": np.array([2], dtype=np.int64),
        "pads": np.array([0, 0, 0, 0, 0, DENSE_WIDTH - width], dtype=np.int64),
    }
    return _model(nodes, ["input_ids", "attention_mask", "token_type_ids"], output, initializers)


def sparse_model() -> bytes:
    """``logits[b, t, v] = weight[id_t]`` where ``v == id_t``, else 0 (masked)."""
    node = helper.make_node
    nodes = [
        node("OneHot", ["input_ids", "depth", "on_off"], ["one_hot"], axis=-1),
        node("Gather", ["weights", "input_ids"], ["token_weights"]),
        node("Cast", ["attention_mask"], ["mask_float"], to=TensorProto.FLOAT),
        node("Mul", ["token_weights", "mask_float"], ["kept"]),
        node("Unsqueeze", ["kept", "axis_2"], ["scale"]),
        node("Mul", ["one_hot", "scale"], ["logits"]),
    ]
    output = helper.make_tensor_value_info(
        "logits", TensorProto.FLOAT, ["batch", "sequence", len(VOCABULARY)]
    )
    initializers = {
        "weights": sparse_weights(),
        "depth": np.array(len(VOCABULARY), dtype=np.int64),
        "on_off": np.array([0.0, 1.0], dtype=np.float32),
        "axis_2": np.array([2], dtype=np.int64),
    }
    return _model(nodes, ["input_ids", "attention_mask"], output, initializers)


def tokenizer() -> Tokenizer:
    """A lower-casing word-level tokenizer that frames a text as ``[CLS] ... [SEP]``."""
    ids = _token_ids()
    built = Tokenizer(models.WordLevel(vocab=ids, unk_token="[UNK]"))
    built.normalizer = normalizers.Lowercase()
    built.pre_tokenizer = pre_tokenizers.Whitespace()
    built.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])],
    )
    return built


def _tokenizer_files() -> dict[str, str]:
    special = {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]",
               "sep_token": "[SEP]"}  # fmt: skip
    return {
        "tokenizer.json": tokenizer().to_str(),
        "tokenizer_config.json": json.dumps({"model_max_length": 128, **special}),
        "special_tokens_map.json": json.dumps(special),
        "config.json": json.dumps(
            {"model_type": "bert", "pad_token_id": 0, "vocab_size": len(VOCABULARY)}
        ),  # fmt: skip
    }


#: The snapshot revision the stand-ins are filed under (any 40 hex digits do).
REVISION = "0" * 40


def place(cache_dir: Path, hf_repo: str, model_file: str, model: bytes) -> Path:
    """File one model in a fastembed cache folder as the Hugging Face hub would."""
    repo_dir = cache_dir / ("models--" + hf_repo.replace("/", "--"))
    snapshot = repo_dir / "snapshots" / REVISION
    (snapshot / model_file).parent.mkdir(parents=True, exist_ok=True)
    (snapshot / model_file).write_bytes(model)
    for name, text in _tokenizer_files().items():
        (snapshot / name).write_text(text)
    (repo_dir / "refs").mkdir(exist_ok=True)
    (repo_dir / "refs" / "main").write_text(REVISION)
    return snapshot


def model_sources() -> dict[str, tuple[str, str]]:
    """Where the installed fastembed looks for Memora's two models: repository, model file."""
    from fastembed import SparseTextEmbedding, TextEmbedding

    from memora_ogm.vector_db.hybrid import MEMORA_DENSE_MODEL, MEMORA_SPARSE_MODEL

    found = {}
    for listing in (
        TextEmbedding.list_supported_models(),
        SparseTextEmbedding.list_supported_models(),
    ):
        for description in listing:
            if description["model"] in (MEMORA_DENSE_MODEL, MEMORA_SPARSE_MODEL):
                found[description["model"]] = (
                    description["sources"]["hf"],
                    description["model_file"],
                )
    return found


def build_cache(cache_dir: Path, sources: dict[str, tuple[str, str]]) -> Path:
    """A fastembed cache folder holding both stand-ins where ``sources`` says."""
    from memora_ogm.vector_db.hybrid import MEMORA_DENSE_MODEL

    for name, (hf_repo, model_file) in sources.items():
        model = dense_model() if name == MEMORA_DENSE_MODEL else sparse_model()
        place(cache_dir, hf_repo, model_file, model)
    return cache_dir
