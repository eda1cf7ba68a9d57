"""nqkit baseline / predict / human-bounds, the submission wrapper and its Dockerfile."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from nqkit.cli import main
from nqkit.data.toy import TOY_PATH, TOY_TRAIN_PATH
from nqkit.formats.nq import read_nq
from nqkit.formats.nq_predictions import read_nq_predictions

from conftest import assert_this_tree, this_tree_env

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def unannotated(tmp_path) -> str:
    """The toy dev set as competition input: two .jsonl.gz shards without annotations."""
    lines = [json.loads(x) for x in TOY_PATH.read_text(encoding="utf-8").splitlines()]
    for d in lines:
        del d["annotations"]
    for n, part in enumerate((lines[:4], lines[4:])):
        with gzip.open(tmp_path / f"nq-test-{n:02d}.jsonl.gz", "wt", encoding="utf-8") as f:
            f.writelines(json.dumps(d) + "\n" for d in part)
    return str(tmp_path / "nq-test-*.jsonl.gz")


def test_readers_accept_examples_without_annotations(unannotated):
    examples = list(read_nq(unannotated))
    assert len(examples) == 7
    assert all(ex.annotations == () for ex in examples)


def test_baseline_command_writes_official_predictions(tmp_path, capsys):
    out = tmp_path / "mf.json"
    code = main(["baseline", "most_frequent", "--train", str(TOY_TRAIN_PATH),
                 "--gold", str(TOY_PATH), "-o", str(out)])
    assert code == 0
    err = capsys.readouterr().err
    assert f"most_frequent: 7 predictions (6 with a long answer, trained on 10 examples) " \
           f"written to {out}" in err
    preds = read_nq_predictions(out)
    assert sorted(preds) == [101, 102, 103, 104, 105, 106, 107]
    assert preds[107].long_answer.is_null
    raw = json.loads(out.read_text())["predictions"][0]
    assert set(raw["long_answer"]) == {"start_byte", "end_byte", "start_token", "end_token"}


def test_baseline_eval_scores_the_toy_data(tmp_path, capsys):
    # closest question on the toy dev: 101, 102, 103, 104, 106 right, 105 wrong (Germany row),
    # 107 NULL; gold long answers: 101-106 (107 has 1 of 5) -> P = R = 5/6
    code = main(["baseline", "closest_question", "--train", str(TOY_TRAIN_PATH),
                 "--gold", str(TOY_PATH), "-o", str(tmp_path / "cq.json"), "--eval"])
    assert code == 0
    out = capsys.readouterr().out
    long_row = next(line for line in out.splitlines() if line.startswith("long answer"))
    assert long_row.split()[2:5] == ["0.8333", "0.8333", "0.8333"]


def test_baseline_without_required_train_is_an_error(tmp_path, capsys):
    code = main(["baseline", "closest_question", "--gold", str(TOY_PATH),
                 "-o", str(tmp_path / "x.json")])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("nqkit: error: the closest_question baseline learns from training "
                          "data, but no training files were given — pass --train")
    assert not (tmp_path / "x.json").exists()


def test_baseline_train_ignored_note_and_unknown_name(tmp_path, capsys):
    code = main(["baseline", "first_paragraph", "--train", str(TOY_TRAIN_PATH),
                 "--gold", str(TOY_PATH), "-o", str(tmp_path / "fp.json")])
    assert code == 0
    assert "first_paragraph needs no training data; --train is ignored" in capsys.readouterr().err
    assert main(["baseline", "nope", "--gold", str(TOY_PATH),
                 "-o", str(tmp_path / "n.json")]) == 2
    err = capsys.readouterr().err
    assert "argument NAME: invalid choice: 'nope'" in err
    for name in ("bm25_candidates", "closest_question", "dense_candidates", "first_paragraph",
                 "most_frequent", "nearest-question", "ambigqa-answers", "ambigqa-questions"):
        assert f"'{name}'" in err


def test_output_over_input_is_refused(tmp_path, capsys):
    target = tmp_path / "dev.jsonl"
    target.write_bytes(TOY_PATH.read_bytes())
    assert main(["baseline", "first_paragraph", "--gold", str(target),
                 "-o", str(target)]) == 2
    assert "the output path is one of the inputs" in capsys.readouterr().err
    assert target.read_bytes() == TOY_PATH.read_bytes()


def test_duplicate_examples_are_an_error(tmp_path, capsys):
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(TOY_PATH.read_bytes())
    assert main(["baseline", "first_paragraph", "--gold", str(TOY_PATH), str(copy),
                 "-o", str(tmp_path / "d.json")]) == 2
    assert capsys.readouterr().err == (
        f"nqkit: error: {copy}:1: duplicate example_id 101 (first at {TOY_PATH}:1) — "
        "give each example once (check for a file or shard given twice)\n")
    # the same file given twice is named as such, before any example is read
    assert main(["baseline", "first_paragraph", "--gold", str(TOY_PATH), str(TOY_PATH),
                 "-o", str(tmp_path / "d.json")]) == 2
    assert (f"{TOY_PATH}: the input file is given twice: it would be read and counted twice"
            in capsys.readouterr().err)


def test_predict_on_unannotated_shards_then_eval(unannotated, tmp_path, capsys):
    out = tmp_path / "predictions.json"
    assert main(["predict", "first_paragraph", "--gold", unannotated, "-o", str(out)]) == 0
    assert "first_paragraph: 7 predictions written to" in capsys.readouterr().err
    assert main(["eval", "nq", "--gold", str(TOY_PATH), "--predictions", str(out),
                 "--no-gold-cache"]) == 0
    table = capsys.readouterr().out
    # first paragraph on the toy dev: 7 predicted; right only on 104, where one annotator
    # chose "Google LLC" and the gold has a long answer (107's first paragraph was also
    # chosen once, but 107 has no gold: 1 of 5). Gold long answers: 101-106. P=1/7, R=1/6.
    long_row = next(line for line in table.splitlines() if line.startswith("long answer"))
    assert long_row.split()[3:5] == ["0.1429", "0.1667"]


def test_predict_with_training_system(unannotated, tmp_path):
    out = tmp_path / "p.json"
    assert main(["predict", "most_frequent", "--train", str(TOY_TRAIN_PATH),
                 "--gold", unannotated, "-o", str(out)]) == 0
    assert sum(not p.long_answer.is_null for p in read_nq_predictions(out).values()) == 6


@pytest.mark.parametrize(("old", "notice"), [
    # the positional form, options before or after the positionals
    (["most_frequent", "{in}", "{out}", "--train", "{train}"],
     "positional INPUT_PATTERN OUTPUT.json are deprecated and will be removed in the next "
     "release; use NAME --gold INPUT_PATTERN -o OUTPUT.json"),
    (["most_frequent", "--train", "{train}", "{in}", "{out}"],
     "positional INPUT_PATTERN OUTPUT.json are deprecated and will be removed in the next "
     "release; use NAME --gold INPUT_PATTERN -o OUTPUT.json"),
    (["--system", "most_frequent", "{in}", "{out}", "--train", "{train}"],
     "--system is deprecated and will be removed in the next release; use NAME --gold "
     "INPUT_PATTERN -o OUTPUT.json"),
])
def test_predict_old_forms_work_with_one_notice(unannotated, tmp_path, capsys, old, notice):
    def argv(words: list[str], out: Path) -> list[str]:
        subst = {"{in}": unannotated, "{out}": str(out), "{train}": str(TOY_TRAIN_PATH)}
        return ["predict", *(subst.get(w, w) for w in words)]

    new_out, old_out = tmp_path / "new.json", tmp_path / "old.json"
    assert main(argv(["most_frequent", "--gold", "{in}", "-o", "{out}", "--train",
                      "{train}"], new_out)) == 0
    new = capsys.readouterr()
    assert main(argv(old, old_out)) == 0
    got = capsys.readouterr()
    assert old_out.read_bytes() == new_out.read_bytes()
    assert got.out == new.out
    assert got.err.splitlines() == [f"nqkit: note: {notice}",
                                    *new.err.replace(str(new_out), str(old_out)).splitlines()]


def test_predict_needs_input_and_output_in_one_form(unannotated, tmp_path, capsys):
    out = str(tmp_path / "p.json")
    assert main(["predict"]) == 2
    assert capsys.readouterr().err == ("nqkit: error: nqkit predict: the following arguments "
                                       "are required: NAME — see `nqkit predict --help`\n")
    for argv in (["--gold", unannotated], [unannotated]):  # new form, old form
        assert main(["predict", "first_paragraph", *argv]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith(
            "nqkit: error: expected NAME --gold INPUT_PATTERN -o OUTPUT.json")
    assert main(["predict", "first_paragraph", unannotated, "-o", out]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(
        "nqkit: error: give the input and output either as --gold/-o or as positional "
        "arguments, not both")
    assert not (tmp_path / "p.json").exists()


def _run_wrapper(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # PYTHON is a shim that records which nqkit the wrapper's interpreter imports, then
    # runs the real interpreter with the wrapper's arguments
    shim_dir = Path(tempfile.mkdtemp(prefix="nqkit-shim-"))
    shim = shim_dir / "python"
    shim.write_text(f"""#!/usr/bin/env bash
"{sys.executable}" -c 'import nqkit; print(nqkit.__file__)' > "{shim_dir}/imported"
exec "{sys.executable}" "$@"
""")
    shim.chmod(0o755)
    e = this_tree_env(PYTHON=str(shim), **env)
    r = subprocess.run(["bash", str(ROOT / "submission" / "submission.sh"), *args],
                       env=e, capture_output=True, text=True, timeout=300)
    imported = shim_dir / "imported"
    assert imported.exists() or r.returncode != 0, "the wrapper did not run $PYTHON"
    if imported.exists():
        assert_this_tree(imported.read_text())
    shutil.rmtree(shim_dir)
    return r


def test_submission_wrapper_end_to_end(unannotated, tmp_path, capsys):
    out = tmp_path / "out" / "predictions.json"
    r = _run_wrapper(unannotated, str(out))
    assert r.returncode == 0, r.stderr
    preds = read_nq_predictions(out)
    assert len(preds) == 7
    assert main(["eval", "nq", "--gold", str(TOY_PATH), "--predictions", str(out),
                 "--no-gold-cache"]) == 0


def test_submission_wrapper_system_and_usage(unannotated, tmp_path):
    out = tmp_path / "p.json"
    r = _run_wrapper(unannotated, str(out), NQKIT_SYSTEM="most_frequent",
                     NQKIT_TRAIN=str(TOY_TRAIN_PATH))
    assert r.returncode == 0, r.stderr
    assert "most_frequent: 7 predictions" in r.stderr
    r = _run_wrapper(unannotated)
    assert r.returncode == 2 and "usage: submission.sh INPUT_PATTERN OUTPUT" in r.stderr
    r = _run_wrapper(str(tmp_path / "none-*.jsonl.gz"), str(out))
    assert r.returncode == 2 and "the input pattern matches no file" in r.stderr


def test_dockerfile_copies_what_exists_and_runs_the_wrapper():
    # The image cannot be built here; check that what it copies exists and that the entry
    # point is the copied wrapper.
    lines = (ROOT / "submission" / "Dockerfile").read_text().splitlines()
    copies = [line.split()[1:] for line in lines if line.startswith("COPY ")]
    for *sources, _dest in copies:
        for src in sources:
            assert (ROOT / src).exists(), src
    (entry,) = [line for line in lines if line.startswith("ENTRYPOINT")]
    wrapper_dest = next(d for *s, d in copies if s == ["submission/submission.sh"])
    workdir = next(line.split()[1] for line in lines if line.startswith("WORKDIR"))
    assert json.loads(entry.split(None, 1)[1]) == [
        str(Path(workdir) / Path(wrapper_dest).relative_to("."))]


def test_human_bounds_command(tmp_path, capsys, shared):
    path = str(shared("data", "nq", "nq-dev-sample10.jsonl.gz"))
    assert main(["eval", "human-bounds", "--gold", path, "--num-references", "4", "--splits", "all",
                 "--no-gold-cache"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("single annotator   long"))
    assert row.split()[-3:] == ["9", "15", "16"]  # derived in test_human_bounds.py
    assert "signature: nq-human|refs:4|beta:2|votes:auto(1/1)|splits:all|v" in out
    assert "10 examples, 5 reference/pool splits each (4 references" in out
    assert main(["eval", "human-bounds", "--gold", path, "--no-gold-cache"]) == 2
    assert "fewer than references + 1 = 6" in capsys.readouterr().err
    assert main(["eval", "human-bounds", "--gold", path, "--num-references", "4", "--format",
                 "json",
                 "--no-gold-cache"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["splits"] == 10 and set(data) >= {"single-long", "super-short", "signature"}


def test_system_settings_are_a_typed_record_and_unknown_names_are_refused():
    import dataclasses

    from nqkit.baselines.predict_files import NqBaselineSettings
    from nqkit.baselines.systems import get_system

    system = get_system("first_paragraph")
    s = system.settings(gold=["in.jsonl"], output="out.json")
    assert isinstance(s, NqBaselineSettings)
    # the old keyword of the input files still works for a release, with a warning
    with pytest.warns(DeprecationWarning, match=r"input= is deprecated .* use gold="):
        assert system.settings(input=["in.jsonl"], output="out.json") == s
    # the declared defaults for the rest (nq_params: thresholds 2, no --eval, table)
    assert (s.long_threshold, s.short_threshold, s.eval, s.train, s.format) == (
        2, 2, False, None, "table")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.output = "x"  # type: ignore[misc]
    with pytest.raises(TypeError, match=r"no setting\(s\) \['outptu'\]; known: .*'output'"):
        system.settings(gold=["in.jsonl"], outptu="out.json")
