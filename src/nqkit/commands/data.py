"""``nqkit data ...``: the dataset registry — list, info, get, verify, path, export.

``nqkit data get NAME`` downloads a dataset's official files (resumable, verified before
they take their final names; see :mod:`nqkit.datasets.download`); ``nqkit data path NAME``
prints where they are; every other command takes the name where it takes a path. The
``stats`` subcommand of the group lives in its own module (``commands/data_stats.py``).
"""

from __future__ import annotations

import argparse
from typing import Any

from nqkit.commands.base import Command, format_param, output_param
from nqkit.settings import Param, float_in, int_in
from nqkit.vocabulary import JOBS, NAMES, REGISTRY, SHARDS


def _registry(args: argparse.Namespace) -> Any:
    from nqkit.datasets.registry import load_registry

    return load_registry(args.registry)


def _disk_label(state: Any) -> str:
    n, m = len(state.present), len(state.files)
    label = "yes" if n == m else "no" if n == 0 else f"{n}/{m}"
    return f"{label}, {len(state.damaged)} damaged" if state.damaged else label


def run_list(args: argparse.Namespace) -> int:
    import orjson

    from nqkit.datasets.download import human_bytes
    from nqkit.datasets.local import dataset_dir, on_disk
    from nqkit.report import format_table

    reg = _registry(args)
    rows = []
    items = []
    for ds in reg:
        state = on_disk(ds)
        size = ds.total_size
        rows.append([ds.name, ds.title, len(ds.files), human_bytes(size)
                     if size is not None else "unknown", ds.licence.split(" (")[0],
                     _disk_label(state)])
        items.append({**ds.to_json(), "total_size": size, "checksums": ds.checksums,
                      "on_disk": {"files": len(state.present), "of": len(state.files),
                                  "directory": str(dataset_dir(ds)),
                                  "damaged": [f.name for f in state.damaged]}})
    if args.format == "json":
        print(orjson.dumps(items, option=orjson.OPT_INDENT_2).decode())
        return 0
    print(format_table(["name", "what", "files", "size", "licence", "on disk"], rows,
                       right={2, 3}))
    return 0


def _wrap(text: str, indent: int) -> str:
    import textwrap

    return textwrap.fill(text, width=96, initial_indent=" " * indent, break_on_hyphens=False,
                         subsequent_indent=" " * indent)[indent:]


def run_info(args: argparse.Namespace) -> int:
    import orjson

    from nqkit.datasets.download import human_bytes
    from nqkit.datasets.integrity import refetch_command
    from nqkit.datasets.local import dataset_dir, get_command, on_disk, read_record
    from nqkit.datasets.registry import FORMATS

    reg = _registry(args)
    ds = reg.get(args.names)
    state = on_disk(ds)
    directory = dataset_dir(ds)
    record = read_record(directory)
    if args.format == "json":
        doc = ds.to_json()
        doc["directory"] = str(directory)
        doc["on_disk"] = [p.name for p in state.present]
        doc["damaged"] = [p.name for p in state.damaged]
        doc["paths"] = [str(p) for p in state.paths]
        doc["recorded"] = {f.name: record[f.name] for f in ds.files if f.name in record}
        print(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
        return 0
    count = f"{ds.count:,} {ds.unit}" if ds.count is not None else f"{ds.unit}: not published"
    size = ds.total_size
    lines = [
        f"{ds.name} — {ds.title}",
        f"  what:      {_wrap(ds.description or ds.title, 13)}",
        f"  format:    {ds.format} ({FORMATS[ds.format]})"
        + (f", a {ds.archive} archive extracted on download" if ds.archive else ""),
        f"  size:      {count}; {len(ds.files)} file{'s' if len(ds.files) > 1 else ''}, "
        f"{human_bytes(size) if size is not None else 'size not published'}",
        f"  licence:   {ds.licence}",
    ]
    if ds.citation:
        lines.append(f"  cite:      {_wrap(ds.citation, 13)}")
    if ds.homepage:
        lines.append(f"  homepage:  {ds.homepage}")
    for i, rel in enumerate(ds.relations):
        lines.append(f"  {'relations:' if i == 0 else '':<10} - {_wrap(rel, 15)}")
    if ds.source != "built-in":
        lines.append(f"  registry:  {ds.source}")
    lines.append("  files:")
    for f in ds.files:
        md5 = f"md5 {f.md5}" if f.md5 else "md5 not published"
        if f.sha256:
            md5 += f", sha256 {f.sha256} ({f.pinned})"
        fsize = f"{f.size:,} bytes" if f.size is not None else "size not published"
        lines.append(f"    {f.name}  {fsize}, {md5}")
        lines.append(f"      {f.url}")
        entry = record.get(f.name)
        if f in state.present and entry and entry.get("sha256"):
            lines.append(f"      on disk, sha256 {entry['sha256']} (verified: "
                         f"{entry.get('verified', '?')})")
        elif f in state.damaged:
            have = (directory / f.name).stat().st_size
            lines.append(f"      on disk but incomplete or damaged ({have:,} bytes): fetch it "
                         f"again with `{refetch_command(ds, f)}`")
    if state.complete:
        lines.append(f"  on disk:   yes, under {directory}")
    else:
        have = f"{len(state.present)} of {len(state.files)} files" if state.present else "no"
        lines.append(f"  on disk:   {have} — fetch with `{get_command(ds)}`")
    print("\n".join(lines))
    return 0


def run_get(args: argparse.Namespace) -> int:
    import time

    import orjson

    from nqkit.datasets.download import fetch, human_bytes
    from nqkit.datasets.local import RECORD, dataset_dir
    from nqkit.errors import InputError
    from nqkit.report import format_table, note, say

    if args.shards and len(args.names) > 1:
        raise InputError(f"--shards {args.shards}", "applies to one dataset, "
                         f"found {len(args.names)}", "fetch the datasets one at a time")
    reg = _registry(args)
    datasets = [reg.get(name) for name in args.names]  # every name checked before fetching
    out: list[dict[str, Any]] = []
    rows = []
    unchecked = []
    for ds in datasets:
        files = ds.select(args.shards)
        start = time.perf_counter()
        fetched = fetch(ds, files, mirror=args.mirror, jobs=args.jobs, retries=args.retries,
                        timeout=args.timeout, force=args.force)
        seconds = time.perf_counter() - start
        received = sum(f.received for f in fetched)
        rate = f" ({human_bytes(received / seconds)}/s)" if received and seconds > 0 else ""
        n_new = sum(f.status != "present" for f in fetched)
        say(f"{ds.name}: {n_new} of {len(fetched)} file(s) fetched, "
            f"{human_bytes(received)} in {seconds:.1f} s{rate}; under {dataset_dir(ds)}")
        for item in fetched:
            shown = item.sha256 if item.file.md5 is None else "-"
            if item.file.md5 is None and item.file.sha256 is None:
                unchecked.append(item.file.name)
            rows.append([f"{ds.name}/{item.file.name}", human_bytes(item.size), item.status,
                         item.verified, shown])
            out.append({"dataset": ds.name, "file": item.file.name, "path": str(item.path),
                        "size": item.size, "status": item.status, "verified": item.verified,
                        "md5": item.md5, "sha256": item.sha256,
                        "published_md5": item.file.md5, "resumed_from": item.resumed_from,
                        "received": item.received, "members": list(item.members)})
    if unchecked:
        note(f"no checksum is published for {len(unchecked)} file(s); their sha256 is shown "
             f"and recorded in {RECORD} beside them")
    if args.format == "json":
        print(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())
    else:
        print(format_table(["file", "size", "status", "checked", "sha256 (no published md5)"],
                           rows, right={1}))
    return 0


def _verify_targets(args: argparse.Namespace) -> list[tuple[Any, Any]]:
    """(dataset, files) to verify: the names given (NAME:SEL picks files), else every
    dataset with a file (or a record) in its directory."""
    from nqkit.datasets.local import RECORD, dataset_dir, select, split_name

    reg = _registry(args)
    if args.names:
        out = []
        for text in args.names:
            name, selector = split_name(text)
            ds = reg.get(name)
            out.append((ds, select(ds, selector)[0]))
        return out
    found = []
    for ds in reg:
        d = dataset_dir(ds)
        if (d / RECORD).is_file() or any((d / f.name).exists() for f in ds.files):
            found.append((ds, ds.files))
    return found


def run_verify(args: argparse.Namespace) -> int:
    import orjson

    from nqkit.datasets.download import human_bytes
    from nqkit.datasets.integrity import DownloadError, verify
    from nqkit.datasets.local import data_home
    from nqkit.report import format_table, note

    targets = _verify_targets(args)
    if not targets:
        note(f"no dataset is on disk under {data_home()}")
        return 0
    items = [item for ds, files in targets for item in verify(ds, files)]
    if args.format == "json":
        print(orjson.dumps([{
            "dataset": i.dataset.name, "file": i.file.name, "path": str(i.path),
            "status": i.status, "checked": i.checked, "size": i.size, "md5": i.md5,
            "sha256": i.sha256, "published_md5": i.file.md5, "published_size": i.file.size,
            "problem": i.problem or None, "fix": i.fix or None} for i in items],
            option=orjson.OPT_INDENT_2).decode())
    else:
        print(format_table(["file", "size", "status", "checked", "what differs"], [
            [f"{i.dataset.name}/{i.file.name}", human_bytes(i.size) if i.size is not None
             else "-", i.status, i.checked, i.problem or "-"] for i in items], right={1}))
    bad = [i for i in items if i.status in ("differs", "missing")]
    if bad:
        first = bad[0]
        more = f" ({len(bad)} files fail: see the table)" if len(bad) > 1 else ""
        raise DownloadError(first.path, (first.problem or first.status) + more, first.fix)
    return 0


def run_path(args: argparse.Namespace) -> int:
    from nqkit.datasets.local import split_name
    from nqkit.datasets.names import local_paths
    from nqkit.errors import InputError

    if args.shards and len(args.names) > 1:
        raise InputError(f"--shards {args.shards}", "applies to one dataset",
                         "use NAME:SPEC per name, e.g. nq/dev:0-1")
    reg = _registry(args)
    lines: list[str] = []
    for text in args.names:
        name, selector = split_name(text)
        if args.shards:
            if selector:
                raise InputError(text, "both NAME:SEL and --shards given", "give one")
            selector = args.shards
        lines.extend(str(p) for p in local_paths(reg.get(name), selector))
    print("\n".join(lines))
    return 0


def run_export(args: argparse.Namespace) -> int:
    from nqkit.datasets.export import export_dataset
    from nqkit.datasets.local import split_name
    from nqkit.datasets.names import local_paths
    from nqkit.errors import InputError
    from nqkit.io import check_output
    from nqkit.report import say

    name, selector = split_name(args.names)
    if args.shards:
        if selector:
            raise InputError(args.names, "both NAME:SEL and --shards given", "give one")
        selector = args.shards
    fmt = args.format or ("parquet" if str(args.output).endswith((".parquet", ".pq"))
                          else "jsonl")
    reg = _registry(args)
    ds = reg.get(name)
    paths = local_paths(ds, selector)
    if args.output != "-":
        check_output(args.output, paths, option="-o")
    n = export_dataset(ds, paths, args.output, fmt)
    where = "standard output" if args.output == "-" else args.output
    say(f"exported {n:,} records of {args.names} ({len(paths)} file(s)) as {fmt} to {where}")
    return 0


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
