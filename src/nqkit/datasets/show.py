"""What ``nqkit data list|info|get|verify|path|export`` do and print.

The commands (:mod:`nqkit.commands.data`) declare their settings and call these
functions with them (``s``: the parsed settings by name); each returns the exit code.
The registry is :mod:`nqkit.datasets.registry`, the downloads
:mod:`nqkit.datasets.download`, what is on disk :mod:`nqkit.datasets.local`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["export", "get", "info", "list_datasets", "path", "verify"]


def _registry(s: Mapping[str, Any]) -> Any:
    from nqkit.datasets.registry import load_registry

    return load_registry(s["registry"])


def _disk_label(state: Any) -> str:
    n, m = len(state.present), len(state.files)
    label = "yes" if n == m else "no" if n == 0 else f"{n}/{m}"
    return f"{label}, {len(state.damaged)} damaged" if state.damaged else label


def list_datasets(s: Mapping[str, Any]) -> int:
    import orjson

    from nqkit.datasets.download import human_bytes
    from nqkit.datasets.local import dataset_dir, on_disk
    from nqkit.report import format_table

    reg = _registry(s)
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
    if s["format"] == "json":
        print(orjson.dumps(items, option=orjson.OPT_INDENT_2).decode())
        return 0
    print(format_table(["name", "what", "files", "size", "licence", "on disk"], rows,
                       right={2, 3}))
    return 0


def _wrap(text: str, indent: int) -> str:
    import textwrap

    return textwrap.fill(text, width=96, initial_indent=" " * indent, break_on_hyphens=False,
                         subsequent_indent=" " * indent)[indent:]


def info(s: Mapping[str, Any]) -> int:
    import orjson

    from nqkit.datasets.download import human_bytes
    from nqkit.datasets.integrity import refetch_command
    from nqkit.datasets.local import dataset_dir, get_command, on_disk, read_record
    from nqkit.datasets.registry import FORMATS

    reg = _registry(s)
    ds = reg.get(s["names"])
    state = on_disk(ds)
    directory = dataset_dir(ds)
    record = read_record(directory)
    if s["format"] == "json":
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


def get(s: Mapping[str, Any]) -> int:
    import time

    import orjson

    from nqkit.datasets.download import fetch, human_bytes
    from nqkit.datasets.local import RECORD, dataset_dir
    from nqkit.errors import InputError
    from nqkit.report import format_table, note, say

    if s["shards"] and len(s["names"]) > 1:
        raise InputError(f"--shards {s['shards']}", "applies to one dataset, "
                         f"found {len(s['names'])}", "fetch the datasets one at a time")
    reg = _registry(s)
    datasets = [reg.get(name) for name in s["names"]]  # every name checked before fetching
    out: list[dict[str, Any]] = []
    rows = []
    unchecked = []
    for ds in datasets:
        files = ds.select(s["shards"])
        start = time.perf_counter()
        fetched = fetch(ds, files, mirror=s["mirror"], jobs=s["jobs"], retries=s["retries"],
                        timeout=s["timeout"], force=s["force"])
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
    if s["format"] == "json":
        print(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())
    else:
        print(format_table(["file", "size", "status", "checked", "sha256 (no published md5)"],
                           rows, right={1}))
    return 0


def _verify_targets(s: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    """(dataset, files) to verify: the names given (NAME:SEL picks files), else every
    dataset with a file (or a record) in its directory."""
    from nqkit.datasets.local import RECORD, dataset_dir, select, split_name

    reg = _registry(s)
    if s["names"]:
        out = []
        for text in s["names"]:
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


def verify(s: Mapping[str, Any]) -> int:
    import orjson

    from nqkit.datasets.download import human_bytes
    from nqkit.datasets.integrity import DownloadError, verify
    from nqkit.datasets.local import data_home
    from nqkit.report import format_table, note

    targets = _verify_targets(s)
    if not targets:
        note(f"no dataset is on disk under {data_home()}")
        return 0
    items = [item for ds, files in targets for item in verify(ds, files)]
    if s["format"] == "json":
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


def path(s: Mapping[str, Any]) -> int:
    from nqkit.datasets.local import split_name
    from nqkit.datasets.names import local_paths
    from nqkit.errors import InputError

    if s["shards"] and len(s["names"]) > 1:
        raise InputError(f"--shards {s['shards']}", "applies to one dataset",
                         "use NAME:SPEC per name, e.g. nq/dev:0-1")
    reg = _registry(s)
    lines: list[str] = []
    for text in s["names"]:
        name, selector = split_name(text)
        if s["shards"]:
            if selector:
                raise InputError(text, "both NAME:SEL and --shards given", "give one")
            selector = s["shards"]
        lines.extend(str(p) for p in local_paths(reg.get(name), selector))
    print("\n".join(lines))
    return 0


def export(s: Mapping[str, Any]) -> int:
    from nqkit.datasets.export import export_dataset
    from nqkit.datasets.local import split_name
    from nqkit.datasets.names import local_paths
    from nqkit.errors import InputError
    from nqkit.io import check_output
    from nqkit.report import say

    name, selector = split_name(s["names"])
    if s["shards"]:
        if selector:
            raise InputError(s["names"], "both NAME:SEL and --shards given", "give one")
        selector = s["shards"]
    fmt = s["format"] or ("parquet" if str(s["output"]).endswith((".parquet", ".pq"))
                          else "jsonl")
    reg = _registry(s)
    ds = reg.get(name)
    paths = local_paths(ds, selector)
    if s["output"] != "-":
        check_output(s["output"], paths, option="-o")
    n = export_dataset(ds, paths, s["output"], fmt)
    where = "standard output" if s["output"] == "-" else s["output"]
    say(f"exported {n:,} records of {s['names']} ({len(paths)} file(s)) as {fmt} to {where}")
    return 0
