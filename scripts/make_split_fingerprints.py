"""Regenerate nqkit's split fingerprints (``src/nqkit/data/split-fingerprints.{json,bin}``).

The question sets come from the real files under ``../shared/data`` (or ``NQKIT_SHARED``);
splits we do not hold get their published count only. Relations between splits that the
identification relies on are checked on the data before anything is written (an alias has
the same questions as its split; a sub-split's questions are all in its parent's known
members; sibling splits share no question).

Run from the repository root::

    PYTHONPATH=src python scripts/make_split_fingerprints.py            # write
    PYTHONPATH=src python scripts/make_split_fingerprints.py --check    # compare, exit 1 if stale

See :mod:`nqkit.splits` for the format and the rules that use it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from nqkit.formats.ambignq import read_ambignq
from nqkit.formats.dpr import read_dpr_qa_tsv
from nqkit.formats.nq_open import read_nq_open
from nqkit.splits import FINGERPRINT_FORMAT, KINDS, key_hash

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "nqkit" / "data"
NQ_OPEN_README = "google-research-datasets/natural-questions nq_open/README.md (split table)"
LEE_DPR = ("Lee et al. 2019 (ORQA) and Karpukhin et al. 2020 (DPR), Table 1: NQ train "
           "79,168 / dev 8,757 / test 3,610")

# name, held, parent, published count (None: not published separately), source file(s)
# under shared/data keyed by kind, aliases with their own file, note
SPLITS: list[dict] = [
    {"name": "nq-open/dev", "held": "full", "parent": None, "published": 3610,
     "files": {"question": ("nq-open/NQ-open.dev.jsonl", "nq-open")},
     "aliases": {"dpr/nq-test.qa": ("dpr/nq-test.qa.tsv", "dpr-qa")},
     "source": f"shared/data/nq-open/NQ-open.dev.jsonl; count: {NQ_OPEN_README}",
     "note": "NQ-open 'Original Dev', drawn from NQ dev; Lee et al. and DPR call it test, "
             "and DPR's nq-test.qa has exactly its questions"},
    {"name": "efficientqa/dev", "held": "full", "parent": None, "published": 1800,
     "files": {"question": ("nq-open/NQ-open.efficientqa.dev.1.1.jsonl", "nq-open")},
     "source": f"shared/data/nq-open/NQ-open.efficientqa.dev.1.1.jsonl; count: "
               f"{NQ_OPEN_README}",
     "note": "EfficientQA dev (v1.1), IID with the EfficientQA test set; no question in "
             "common with nq-open/dev"},
    {"name": "efficientqa/test", "held": "none", "parent": None, "published": 1800,
     "source": NQ_OPEN_README,
     "note": "EfficientQA test; not held, so never identified"},
    {"name": "nq-open/train", "held": "part", "parent": None, "published": 87925,
     "source": NQ_OPEN_README,
     "note": "NQ-open train (NQ-open.train.jsonl), drawn from NQ train; holds DPR's "
             "nq-train.qa and nq-dev.qa (ORQA's train and held-out dev)"},
    {"name": "dpr/nq-train.qa", "held": "part", "parent": "nq-open/train", "published": 79168,
     "source": LEE_DPR,
     "note": "the NQ-open train questions that DPR and ORQA train on (nq-open/train minus "
             "dpr/nq-dev.qa); its known members are AmbigNQ train's questions"},
    {"name": "dpr/nq-dev.qa", "held": "full", "parent": "nq-open/train", "published": 8757,
     "files": {"question": ("dpr/nq-dev.qa.tsv", "dpr-qa")},
     "source": f"shared/data/dpr/nq-dev.qa.tsv; count: {LEE_DPR}",
     "note": "ORQA's held-out dev: NQ-open train questions, not nq-open/dev"},
    {"name": "ambignq/dev", "held": "full", "parent": "dpr/nq-dev.qa", "published": 2002,
     "files": {"question": ("ambignq/dev_light.json", "ambignq"),
               "id": ("ambignq/dev_light.json", "ambignq-id")},
     "source": "shared/data/ambignq/dev_light.json; count: Min et al. 2020, Table 2",
     "note": "AmbigNQ dev: its prompt questions are DPR/ORQA dev (dpr/nq-dev.qa) questions"},
    {"name": "ambignq/train", "held": "full", "parent": "dpr/nq-train.qa", "published": 10036,
     "files": {"question": ("ambignq/train_light.json", "ambignq"),
               "id": ("ambignq/train_light.json", "ambignq-id")},
     "source": "shared/data/ambignq/train_light.json; count: Min et al. 2020, Table 2",
     "note": "AmbigNQ train: NQ-open train questions outside dpr/nq-dev.qa (so, as DPR's "
             "train and dev partition NQ-open train, in dpr/nq-train.qa)"},
]


def read_keys(path: Path, reader: str) -> Iterator[str]:
    if reader == "nq-open":
        yield from (ex.question for ex in read_nq_open(path))
    elif reader == "dpr-qa":
        yield from (q for q, _ in read_dpr_qa_tsv(path))
    elif reader == "ambignq":
        yield from (ex.question for ex in read_ambignq(path))
    elif reader == "ambignq-id":
        yield from (ex.id for ex in read_ambignq(path))
    else:
        raise ValueError(reader)


def hash_file(data: Path, rel: str, reader: str, kind: str) -> tuple[set[int], int]:
    hashes, n = ordered_hashes(data, rel, reader, kind)
    return set(hashes), n


def ordered_hashes(data: Path, rel: str, reader: str, kind: str) -> tuple[list[int], int]:
    """The hashes of a file's keys in file order (each at its first line), and its lines."""
    keys = list(read_keys(data / rel, reader))
    return list(dict.fromkeys(key_hash(k, kind) for k in keys)), len(keys)


def build(data: Path) -> tuple[bytes, bytes]:
    names = [s["name"] for s in SPLITS]
    by_name = {s["name"]: s for s in SPLITS}
    sets: dict[tuple[str, str], set[int]] = {}
    counts: dict[str, int] = {}
    for s in SPLITS:
        for kind, (rel, reader) in s.get("files", {}).items():
            hashes, lines = hash_file(data, rel, reader, kind)
            if len(hashes) != lines:
                raise SystemExit(f"{rel}: {lines} lines but {len(hashes)} distinct {kind}s "
                                 "after normalisation")
            if s["published"] is not None and lines != s["published"]:
                raise SystemExit(f"{rel}: {lines} {kind}s, published {s['published']}")
            sets[s["name"], kind] = hashes
            counts[s["name"]] = lines
        for alias, (rel, reader) in s.get("aliases", {}).items():
            hashes, _ = hash_file(data, rel, reader, "question")
            if hashes != sets[s["name"], "question"]:
                raise SystemExit(f"{rel}: {alias} does not have the questions of {s['name']}")

    def lineage(name: str) -> list[str]:
        out = [name]
        while by_name[out[-1]]["parent"] is not None:
            out.append(by_name[out[-1]]["parent"])
        return out

    # relations: a held split shares questions only with its ancestors' other members,
    # never with a held split outside its lineage (siblings and unrelated splits)
    held = [n for n in names if (n, "question") in sets]
    for a in held:
        for b in held:
            if a < b and a not in lineage(b) and b not in lineage(a):
                common = sets[a, "question"] & sets[b, "question"]
                if common:
                    raise SystemExit(f"{a} and {b} share {len(common)} questions but neither "
                                     "is drawn from the other")
            if a != b and b in lineage(a) and not sets[a, "question"] <= sets[b, "question"]:
                raise SystemExit(f"{a} is not a subset of {b}")

    blob = bytearray()
    tables: dict[str, dict] = {}
    for kind in KINDS:
        kind_splits = [n for n in names if (n, kind) in sets]
        bits = {n: i for i, n in enumerate(kind_splits)}
        masks: dict[int, int] = {}
        for n in kind_splits:
            for h in sets[n, kind]:
                masks[h] = masks.get(h, 0) | (1 << bits[n])
        hashes = np.array(sorted(masks), dtype="<u8")
        mask_arr = np.array([masks[int(h)] for h in hashes], dtype="<u2")
        tables[kind] = {"count": len(hashes), "offset": len(blob), "bits": bits}
        blob += hashes.tobytes() + mask_arr.tobytes()
        while len(blob) % 8:  # keep every hash array 8-byte aligned
            blob += b"\0"
        # the file order of each split held in its own file: for the split's members in
        # sorted-hash order, each one's line position (uint32)
        # (an alias's own file, as DPR's nq-test.qa, has its own order: kept under its name)
        order: dict[str, dict[str, int | str]] = {}
        for n in kind_splits:
            files = [(n, by_name[n]["files"][kind])] if kind in by_name[n].get("files", {}) \
                else []
            if kind == "question":
                files += list(by_name[n].get("aliases", {}).items())
            members = sorted(sets[n, kind])
            for name, (rel, reader) in files:
                in_order, _ = ordered_hashes(data, rel, reader, kind)
                position = {h: i for i, h in enumerate(in_order)}
                positions = np.array([position[h] for h in members], dtype="<u4")
                order[name] = {"split": n, "offset": len(blob), "count": len(members)}
                blob += positions.tobytes()
                while len(blob) % 8:
                    blob += b"\0"
        tables[kind]["order"] = order
    meta = {
        "format": FINGERPRINT_FORMAT,
        "generated_by": "scripts/make_split_fingerprints.py",
        "normalisation": "NFKC, casefold, whitespace runs to one space, strip, drop one "
                         "trailing '?' (ids: strip)",
        "hash": "first 8 bytes (little-endian uint64) of BLAKE2b(kind + NUL + normalised)",
        "layout": "per kind: sorted uint64 hashes, then one uint16 mask per hash (bit i = "
                  "held split i of that kind), padded to 8 bytes; then per split held in "
                  "its own file ('order'), the line position (uint32) of each of its "
                  "members in sorted-hash order, padded to 8 bytes",
        "tables": tables,
        "splits": [{"name": s["name"], "count": counts.get(s["name"], s["published"]),
                    "held": s["held"], "parent": s["parent"],
                    "aliases": sorted(s.get("aliases", {})), "source": s["source"],
                    "note": s["note"]} for s in SPLITS],
    }
    text = json.dumps(meta, indent=1, ensure_ascii=False) + "\n"
    return text.encode("utf-8"), bytes(blob)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=os.environ.get("NQKIT_SHARED", str(ROOT.parent / "shared")),
                    help="the shared folder holding data/ (default: NQKIT_SHARED or ../shared)")
    ap.add_argument("--out", default=str(OUT), help="where to write (default: %(default)s)")
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 when the files in --out differ")
    args = ap.parse_args(argv)
    meta, blob = build(Path(args.shared) / "data")
    out = Path(args.out)
    targets = {out / "split-fingerprints.json": meta, out / "split-fingerprints.bin": blob}
    if args.check:
        stale = [p.name for p, b in targets.items() if not p.is_file() or p.read_bytes() != b]
        print(f"stale: {', '.join(stale)}" if stale else "split fingerprints are up to date")
        return 1 if stale else 0
    for path, content in targets.items():
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_bytes(content)
        os.replace(tmp, path)
    print(f"wrote {', '.join(str(p) for p in targets)} ({len(meta) + len(blob):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
