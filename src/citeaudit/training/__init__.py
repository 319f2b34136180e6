"""Building and measuring model judges: readers for public human-labelled attribution sets (data),
the training mix and fine-tuning (train), ONNX export and the model card (export), and the fit of
the judge's calibration (calibrate). `citeaudit train-judge` runs train, export and calibrate in turn."""

from citeaudit.training.data import (
    LABEL_MAPPING,
    export_validation_sets,
    find_data_dir,
    load_all,
    normalise_claim,
    split_of,
    split_rows,
)

__all__ = [
    "LABEL_MAPPING", "export_validation_sets", "find_data_dir", "load_all", "normalise_claim",
    "split_of", "split_rows",
]
