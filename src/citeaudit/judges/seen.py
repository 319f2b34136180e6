"""What a judge has seen: the claims its judge directory's model was trained and calibrated on.

A judge directory may hold `trained_on.txt.gz` (records.TRAINED_ON_FILE): a header line saying what it
covers (`# citeaudit trained-on claims v1: train split of wice, ...`), then one line per claim, its
key: the first 16 hex digits of the SHA-256 of the claim as `text.normalise_claim` writes it, sorted,
gzipped without a time stamp (the same claims give the same bytes). The unit is the claim, as the
shared data's split is (training/data.py): a judge has seen a label when it trained or was calibrated
on that claim, with whatever passage. The file records what the judge learnt from and cannot change
a judgment, so it is no part of the judge's signature (records.directory_sha256 leaves it out).

`validate-judge`, `agree` and `adapt-judge` read it to say how many of a team's labelled claims the
judge has seen, and give the figures on the ones it has not beside the rest; without the file what
the judge has seen is unknown, and they say so.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeaudit.errors import JudgeSetupError
from citeaudit.records import TRAINED_ON_FILE, directory_sha256
from citeaudit.text import normalise_claim

FILE_NAME = TRAINED_ON_FILE
HEADER = "# citeaudit trained-on claims v1: "
KEY_LENGTH = 16
_KEY = re.compile(f"[0-9a-f]{{{KEY_LENGTH}}}")
NO_FILE = "the judge directory records no training claims"
# What the reports say the judge did with a claim it has seen.
SEEN_MEANS = "trained or calibrated on them"


def claim_key(text: str) -> str:
    """A claim's key: the first 16 hex digits of the SHA-256 of its normalised form (text.normalise_claim),
    so the same claim with other spacing, case, punctuation or [n] markers has the same key."""
    return hashlib.sha256(normalise_claim(text).encode("utf-8")).hexdigest()[:KEY_LENGTH]


@dataclass(frozen=True)
class SeenClaims:
    """The claims a judge directory records that its judge trained or was calibrated on."""

    file: Path
    keys: frozenset[str]
    covers: str  # what the header says the claims are: which splits of which sources

    def has_seen(self, claim: str) -> bool:
        return claim_key(claim) in self.keys

    def parts(self, claims: Iterable[str]) -> dict[str, list[int]]:
        """The positions of the `claims` the judge has not seen (`unseen`) and of those it has (`seen`):
        the two sets of figures the reports give."""
        out: dict[str, list[int]] = {"unseen": [], "seen": []}
        for i, claim in enumerate(claims):
            out["seen" if self.has_seen(claim) else "unseen"].append(i)
        return out


def read_seen(model_dir: str | os.PathLike[str]) -> SeenClaims | None:
    """The claims the judge directory records (None: it has no trained_on.txt.gz). A damaged file is a
    JudgeSetupError naming it and what is wrong (the line, for a line that is no claim key)."""
    file = Path(model_dir) / FILE_NAME
    if not file.exists():
        return None
    try:
        text = gzip.decompress(file.read_bytes()).decode("utf-8")
    except OSError as err:  # unreadable, or not gzip (gzip.BadGzipFile is an OSError)
        raise JudgeSetupError(f"{file}: cannot read it as gzipped text ({err})") from None
    except (EOFError, zlib.error):
        raise JudgeSetupError(f"{file}: a truncated or damaged gzip file") from None
    except UnicodeDecodeError:
        raise JudgeSetupError(f"{file}: not UTF-8 text") from None
    lines = text.splitlines()
    if not lines or not lines[0].startswith(HEADER):
        raise JudgeSetupError(f"{file}: line 1: expected the header '{HEADER.strip()} WHAT IT COVERS'")
    for n, line in enumerate(lines[1:], 2):
        if not _KEY.fullmatch(line):
            raise JudgeSetupError(f"{file}: line {n}: expected a claim key ({KEY_LENGTH} hex digits), "
                                  f"found {line[:40]!r}")
    return SeenClaims(file, frozenset(lines[1:]), lines[0].removeprefix(HEADER).strip())


def write_seen(model_dir: str | os.PathLike[str], keys: Iterable[str], covers: str) -> Path:
    """Write the judge directory's trained_on.txt.gz: `covers` in the header, then the claim keys
    (`claim_key` of each claim) sorted, once each; the same keys and covers give the same bytes."""
    keys = sorted(set(keys))
    bad = next((k for k in keys if not _KEY.fullmatch(k)), None)
    if bad is not None:
        raise ValueError(f"not a claim key ({KEY_LENGTH} hex digits): {bad!r}")
    if "\n" in covers or "\r" in covers or not covers.strip():
        raise ValueError("covers: one line saying what the claims are")
    data = (HEADER + covers.strip() + "\n" + "".join(k + "\n" for k in keys)).encode("utf-8")
    file = Path(model_dir) / FILE_NAME
    # written beside and renamed: a reader never finds half a file (a hidden name: no part of the directory)
    partial = file.with_name(f".{FILE_NAME}.partial")
    partial.write_bytes(gzip.compress(data, mtime=0))
    partial.replace(file)
    return file


# --- what the reports say ----------------------------------------------------------------------------


def seen_in(directory: Path | None, judge: str, signature: str | None = None,
            chinese: tuple[str, Path] | None = None) -> SeenClaims | str:
    """The claims `directory` records, or why what the judge has seen is unknown: it reads no judge
    directory, the directory is not here, or records none. With `signature` (a run's judge), the directory
    must be the one the signature names (its hash in it), not one changed since. `chinese`: the name and
    directory of the judge this one hands its Chinese pairs to (the model judge's judge-v2), whose claims
    count as seen too (`merged`)."""
    found = _seen_in(directory, judge, signature)
    if chinese is None:
        return found
    name, other = chinese
    return merged(found, _seen_in(other, name, signature), name)


def merged(own: SeenClaims | str, chinese: SeenClaims | str, chinese_judge: str) -> SeenClaims | str:
    """What a judge that hands its Chinese pairs to another has seen: the claims of both records (a
    claim either trained or was calibrated on is seen), or unknown when either record is."""
    if isinstance(own, str):
        return own
    if isinstance(chinese, str):
        return f"{chinese_judge}, which judges its Chinese pairs: {chinese}"
    return SeenClaims(own.file, own.keys | chinese.keys,
                      f"{own.covers}; and its Chinese pairs go to {chinese_judge}, whose directory records: "
                      f"{chinese.covers}")


def _seen_in(directory: Path | None, judge: str, signature: str | None) -> SeenClaims | str:
    if directory is None:
        return f"{judge} reads no judge directory"
    if not directory.is_dir():
        return f"the judge directory {directory} is not here"
    if signature is not None and f"#{directory_sha256(directory)[:12]}" not in signature:
        return f"the judge directory {directory} is not the one the run's judge signs (its files differ)"
    found = read_seen(directory)
    return NO_FILE if found is None else found


def seen_summary(seen: SeenClaims | str, claims: Iterable[str]) -> dict[str, Any]:
    """How many of the distinct labelled `claims` the judge has seen: {"claims": N, "of": M, "covers",
    "file"}, or {"claims": None, "of": M, "unknown": why}."""
    keys = {claim_key(c) for c in claims}
    if isinstance(seen, str):
        return {"claims": None, "of": len(keys), "unknown": seen}
    return {"claims": len(keys & seen.keys), "of": len(keys), "covers": seen.covers, "file": str(seen.file)}


def seen_lines(summary: Mapping[str, Any], judge: str = "the judge", indent: str = "") -> list[str]:
    """What the reports say: how many of the labelled claims the judge has seen, and what its directory
    says the claims it learnt from are; or that this is unknown, and why. When it has seen none of them,
    or all, the figures given are all of one kind, and that is said instead of a table (see `mixed`)."""
    if summary["claims"] is None:
        return [f"{indent}{judge} has seen: unknown ({summary['unknown']})"]
    lines = [f"{indent}{judge} has seen {summary['claims']} of {summary['of']} labelled claims ({SEEN_MEANS})",
             f"{indent}  its directory records the claims of: {summary['covers']}"]
    if not mixed(summary) and summary["of"]:
        kind = "has not seen" if summary["claims"] == 0 else "has seen"
        lines.append(f"{indent}  so every figure here is on claims it {kind}")
    return lines


def mixed(summary: Mapping[str, Any]) -> bool:
    """Whether the judge has seen some of the labelled claims and not others: the figures on the unseen
    ones then differ from the rest, and the reports show both."""
    return summary["claims"] is not None and 0 < summary["claims"] < summary["of"]
