"""A sentence-transformers model directory is identified by its files' contents.

The fingerprint keys the embedding cache (``reqa run --retriever dense``) and is recorded
in a dense index: two models whose files have the same names and sizes -- a fine-tuned
copy of a model, or one whose pooling module was changed -- must not share it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from nqkit.retrieval.encoders import SentenceTransformerEncoder


def _model(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_text('{"hidden_size": 4}', encoding="utf-8")
    (root / "model.safetensors").write_bytes(bytes(range(256)) * 64)
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}',
                                                     encoding="utf-8")
    return root


def _rewrite(path: Path, data: bytes) -> None:
    """A new file at ``path`` (another inode, as a save by most tools gives)."""
    tmp = path.with_name(path.name + ".new")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _fp(path: Path) -> str:
    return SentenceTransformerEncoder(path, show_progress=False).fingerprint()


def test_same_sizes_other_weights_other_fingerprint(tmp_path: Path) -> None:
    base = _model(tmp_path / "a" / "model")
    copy = tmp_path / "b" / "model"
    shutil.copytree(base, copy)
    assert _fp(copy) == _fp(base)  # the contents, not the place
    weights = bytearray((copy / "model.safetensors").read_bytes())
    weights[1000] ^= 1  # one bit of one weight, the size unchanged
    _rewrite(copy / "model.safetensors", bytes(weights))
    assert _fp(copy) != _fp(base)
    enc = SentenceTransformerEncoder(copy, show_progress=False)
    # what nqkit recorded before: names and sizes, blind to the change
    assert enc.legacy_fingerprint() == \
        SentenceTransformerEncoder(base, show_progress=False).legacy_fingerprint()


def test_a_changed_module_in_a_subdirectory_changes_it(tmp_path: Path) -> None:
    base = _model(tmp_path / "a" / "model")
    before = _fp(base)
    _rewrite(base / "1_Pooling" / "config.json", b'{"pooling_mode_cls_token": true}')
    assert _fp(base) != before
