"""The libraries' own warnings and advice stay out of what an export prints (adapt-judge, train-judge)."""

import logging
import warnings

import pytest

pytest.importorskip("torch")
pytest.importorskip("onnxruntime")

from tiny_models import build_hf  # noqa: E402


def test_an_export_and_its_quantisation_print_no_library_noise(tmp_path, capfd, caplog):
    from citeaudit.training.export import export_fp32, quantize_int8

    hf = build_hf(tmp_path / "hf", labels=("full", "partial", "none", "contradicts"))
    caplog.set_level(logging.WARNING)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        export_fp32(hf, tmp_path / "fp32", 64)
        quantize_int8(tmp_path / "fp32", tmp_path / "int8")
    assert (tmp_path / "int8" / "model_int8.onnx").is_file()
    assert [str(w.message)[:80] for w in caught] == []  # TracerWarning, UserWarning, DeprecationWarning
    assert [r.getMessage()[:80] for r in caplog.records if r.levelno >= logging.WARNING] == []  # pre-processing advice
    out, err = capfd.readouterr()
    assert "warn" not in (out + err).lower() and "pre-process" not in (out + err)
