"""What training, export and calibration of the model judge share: the class names, the work folder,
the attribution sets' licences. The base models, and where each one comes from, are training/bases.py's."""

from __future__ import annotations

import os
from pathlib import Path

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
