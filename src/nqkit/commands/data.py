"""``nqkit data ...``: the dataset registry — list, info, get, verify, path, export.

``nqkit data get NAME`` downloads a dataset's official files (resumable, verified before
they take their final names; see :mod:`nqkit.datasets.download`); ``nqkit data path NAME``
prints where they are; every other command takes the name where it takes a path. The
``stats`` subcommand of the group lives in its own module (``commands/data_stats.py``).
This module declares the commands; :mod:`nqkit.datasets.show` does the work.
"""

from __future__ import annotations

import argparse

from nqkit.commands.base import Command, format_param, output_param
from nqkit.settings import Param, float_in, int_in
from nqkit.vocabulary import JOBS, NAMES, REGISTRY, SHARDS


def run_list(args: argparse.Namespace) -> int:
    from nqkit.datasets.show import list_datasets

    return list_datasets(vars(args))


def run_info(args: argparse.Namespace) -> int:
    from nqkit.datasets.show import info

    return info(vars(args))


def run_get(args: argparse.Namespace) -> int:
    from nqkit.datasets.show import get

    return get(vars(args))


def run_verify(args: argparse.Namespace) -> int:
    from nqkit.datasets.show import verify

    return verify(vars(args))


def run_path(args: argparse.Namespace) -> int:
    from nqkit.datasets.show import path

    return path(vars(args))


def run_export(args: argparse.Namespace) -> int:
    from nqkit.datasets.show import export

    return export(vars(args))


FORMAT = format_param("table", "json")

ORDER = 130  # where `nqkit --help` lists it
COMMANDS = (
    Command("list", "list the datasets nqkit knows, with size, licence and whether on disk",
            "List every registry dataset: name, what it is, size, licence, and whether it "
            "is on disk (under $NQKIT_HOME/data, default ~/.cache/nqkit/data).",
            run_list, group="data", params=(FORMAT, REGISTRY)),
    Command("info", "everything about one dataset: files, checksums, licence, citation, "
            "relations to other splits",
            "Describe a dataset: what it is, its files with URL, size and md5 (or 'not "
            "published'), licence, citation, how it relates to other splits, and what is on "
            "disk (with the recorded sha256).",
            run_info, group="data", params=(
                NAMES.but(help="a registry name, e.g. nq/dev", nargs=None),
                FORMAT, REGISTRY)),
    Command("get", "download datasets (resumable, verified, atomic)",
            "Download the official files of datasets into $NQKIT_HOME/data/NAME (default "
            "~/.cache/nqkit/data): several files at once, resumed after an interruption, "
            "size and md5 verified before a file takes its final name; the sha256 of every "
            "file is recorded (and shown where no checksum is published). Files already on "
            "disk are not fetched again.",
            run_get, group="data", params=(
                NAMES,
                SHARDS,
                Param("mirror", "--mirror", "fetch from a copy laid out like the official "
                      "URLs' paths: each URL's scheme and host are replaced by URL (a base "
                      "URL or a directory)", metavar="URL"),
                JOBS.but(help="files downloaded at once (default 4)", default=4,
                         type=int_in(1, 32)),
                Param("retries", "--retries", "retries of a file after a dropped connection "
                      "(default 3; an attempt that brings 1 MB resets the count; 0 never "
                      "retries)", default=3, type=int_in(0, 100)),
                Param("timeout", "--timeout", "network timeout (default 60)", default=60.0,
                      type=float_in(0.1, 3600), metavar="SECONDS"),
                Param("force", "--force", "fetch the files again even if they are on disk "
                      "(the repair of a damaged file: the copy on disk is replaced only once "
                      "the new one is verified)", default=False, action="store_true"),
                FORMAT, REGISTRY)),
    Command("verify", "re-hash downloaded files against the published and recorded "
            "checksums",
            "Read every file of the named datasets that is on disk (of every dataset on "
            "disk without NAME) and compare it with the published size and md5 and the "
            "sha256 recorded at download, whatever its stamp: one row per file (ok, differs, "
            "missing, not downloaded). Exit 2 naming the first file that differs (or was "
            "recorded and is gone) and the command that fetches it again. NAME:SEL checks "
            "part of a dataset (nq/dev:0-1).",
            run_verify, group="data", params=(
                NAMES.but(help="registry names (default: every dataset on disk)", nargs="*"),
                FORMAT, REGISTRY)),
    Command("path", "print the local path of each file of a dataset, one per line",
            "Print the local files of datasets, one per line (the extracted files for an "
            "archive). NAME:SEL picks shards (nq/dev:0-1) or one file by name or stem "
            "(ambignq/light:dev_light). A dataset not on disk is an error naming the `nqkit "
            "data get` command.",
            run_path, group="data", params=(
                NAMES,
                SHARDS.but(help="only these files (0-1, 0,3)"),
                REGISTRY)),
    Command("export", "export a dataset as JSON lines or Parquet, streaming",
            "Export the records of a downloaded dataset: JSON lines (verbatim lines for "
            "JSONL sources; one record per question for SQuAD; one per row for TSV files) "
            "or Parquet (pyarrow, written in batches). `-o -` streams JSON lines to standard "
            "output.",
            run_export, group="data", params=(
                NAMES.but(help="a registry name (NAME:SEL for part of it)", nargs=None),
                output_param("output file (.gz compresses JSON lines), or - for standard "
                             "output"),
                format_param("jsonl", "parquet", default=None, help="output format "
                             "(default: parquet for a .parquet name, else jsonl)"),
                SHARDS.but(help="only these files (0-1, 0,3)"),
                REGISTRY)),
)
