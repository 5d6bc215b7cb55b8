#!/usr/bin/python3
"""Checks an MLflow file store against MLflow's documented layout, file by file, with
python3-yaml, and prints what it read as JSON. Usage: check_mlflow.py MLRUNS"""
import json
import os
import re
import sys

import yaml

root = sys.argv[1]
EXPERIMENT_KEYS = ["artifact_location", "creation_time", "experiment_id", "last_update_time", "lifecycle_stage",
                   "name"]
RUN_KEYS = ["artifact_uri", "end_time", "entry_point_name", "experiment_id", "lifecycle_stage", "run_id",
            "run_name", "run_uuid", "source_name", "source_type", "source_version", "start_time", "status", "tags",
            "user_id"]


def block_yaml(path, keys):
    text = open(path).read()
    assert not text.lstrip().startswith("{"), f"{path}: not block YAML"
    top = [line.split(":")[0] for line in text.splitlines() if line and not line.startswith(" ")]
    assert top == sorted(top), f"{path}: keys not sorted: {top}"
    meta = yaml.safe_load(text)
    assert sorted(meta) == keys, f"{path}: keys {sorted(meta)}"
    return meta


def files(folder):
    out = {}
    for base, _, names in os.walk(folder):
        for n in names:
            key = os.path.relpath(os.path.join(base, n), folder)
            out[key] = open(os.path.join(base, n)).read()
    return out


report = {"experiments": {}}
for exp in sorted(os.listdir(root)):
    if not os.path.isdir(os.path.join(root, exp)):
        continue
    assert re.fullmatch(r"\d+", exp), exp
    meta = block_yaml(os.path.join(root, exp, "meta.yaml"), EXPERIMENT_KEYS)
    assert meta["experiment_id"] == exp and isinstance(meta["experiment_id"], str)
    assert meta["artifact_location"] == "file://" + os.path.abspath(os.path.join(root, exp))
    assert meta["lifecycle_stage"] == "active" and isinstance(meta["creation_time"], int)
    runs = {}
    for run in sorted(os.listdir(os.path.join(root, exp))):
        path = os.path.join(root, exp, run)
        if not os.path.isdir(path) or run in ("tags", "datasets", "traces"):
            continue
        assert re.fullmatch(r"[0-9a-f]{32}", run), run
        m = block_yaml(os.path.join(path, "meta.yaml"), RUN_KEYS)
        assert m["run_id"] == m["run_uuid"] == run and m["experiment_id"] == exp
        assert m["artifact_uri"] == "file://" + os.path.abspath(os.path.join(path, "artifacts"))
        assert m["status"] in (1, 3, 4) and m["source_type"] == 4 and m["tags"] == []
        metrics = {}
        for key, text in files(os.path.join(path, "metrics")).items():
            assert text.endswith("\n"), key
            points = []
            for line in text.splitlines():
                ts, value, step = line.split(" ")
                assert int(ts) >= m["start_time"], (key, line)
                number = float(value)
                points.append([number if number == number and abs(number) != float("inf") else None, int(step), value])
            metrics[key] = points
        params = files(os.path.join(path, "params"))
        tags = files(os.path.join(path, "tags"))
        for k, v in list(params.items()) + list(tags.items()):
            assert not v.endswith("\n"), f"{k}: trailing newline"
        runs[run] = {"meta": m, "metrics": metrics, "params": params, "tags": tags,
                     "artifacts": sorted(os.listdir(os.path.join(path, "artifacts")))}
    report["experiments"][meta["name"]] = {"id": exp, "runs": runs}
print(json.dumps(report))
