"""The manifest task of bench/manifestTask.ts on the reference's optimize_anything.

    GEPA_REF=/path/to/gepa-checkout python3 bench/reference/manifest.py [--seeds 10] [--budgets 60,150,300]

The same manifests, classes, evaluator (score, objective scores, summary line
and one record per file) and simulated reflection model (the same regular
expressions over the prompt text, FNV-1a of the prompt, a rule learned when
hash % 1000 < learnPermille) as bench/manifestTask.ts. The reference renders
its own prompt, so the randomness is statistically equivalent, not
identical: compare means over seeds. Runs `gepa.gepa_launcher.optimize_anything`
at its defaults (hybrid frontier, minibatch 3, no skipping of perfect
minibatches), generalization mode (train / validation manifests), plus
single-task mode (the first manifest) at budget 30; the held-out score of
`best_candidate` on the test manifests, computed outside the run. Writes
bench/results/side-info-reference.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys

REF = os.environ.get("GEPA_REF")
if REF is None:
    sys.exit("set GEPA_REF to a checkout of gepa-ai/gepa (the directory holding src/gepa)")
sys.path.insert(0, os.path.join(REF, "src"))

from gepa.gepa_launcher import EngineConfig, GEPAConfig, ReflectionConfig, optimize_anything  # noqa: E402

GROUPS, FILES, TRAIN, VAL, TEST, LEARN = 24, 100, 24, 12, 60, 300
EXTENSIONS = ["ts", "md", "json", "sh"]
DEFAULT_CLASS = {"ts": "source", "md": "docs", "json": "config", "sh": "script"}
CLASSES = ["source", "test", "docs", "config", "script", "fixture"]
SEED_TEXT = "# rules: first match wins; files no rule matches get their extension's default class\n# v0"


def fnv(text: str) -> int:
    # over UTF-16 code units, as JavaScript's charCodeAt gives them
    data = text.encode("utf-16-le")
    h = 0x811C9DC5
    for i in range(0, len(data), 2):
        h ^= data[i] | (data[i + 1] << 8)
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def true_class(group: int, ext: str) -> str:
    h = fnv(f"class|{group}|{ext}")
    if h % 100 >= 45:
        return DEFAULT_CLASS[ext]
    others = [c for c in CLASSES if c != DEFAULT_CLASS[ext]]
    return others[(h >> 8) % len(others)]


def manifest(mid: int) -> dict:
    files = []
    for i in range(FILES):
        h = fnv(f"file|{mid}|{i}")
        files.append(f"g{h % GROUPS:02d}/f{(h >> 8) % 1000:03d}.{EXTENSIONS[(h >> 20) % len(EXTENSIONS)]}")
    return {"id": mid, "files": files}


DATASET = [manifest(i) for i in range(TRAIN)]
VALSET = [manifest(TRAIN + i) for i in range(VAL)]
TESTSET = [manifest(TRAIN + VAL + i) for i in range(TEST)]


def parse(path: str) -> tuple[int, str]:
    m = re.match(r"^g(\d+)/f\d+\.(\w+)$", path)
    return int(m.group(1)), m.group(2)


def rules_of(text: str) -> list[tuple[int, str, str, str]]:
    return [(int(m.group(1)), m.group(2), m.group(3), m.group(0)) for m in re.finditer(r"^g(\d+)/\*\.(\w+) => (\w+)$", text, re.M)]


def classify(rules, path):
    group, ext = parse(path)
    for g, e, cls, line in rules:
        if g == group and e == ext:
            return cls, line
    return DEFAULT_CLASS[ext], f"default for .{ext}"


def evaluate(candidate: str, example: dict):
    rules = rules_of(candidate)
    files = []
    for file in example["files"]:
        group, ext = parse(file)
        expected = true_class(group, ext)
        cls, rule = classify(rules, file)
        ok = cls == expected
        files.append({
            "file": file,
            "expected": expected,
            "predicted": cls,
            "rule": rule,
            "ok": ok,
            "owner": f"team-{group % 5}",
            "size": 200 + fnv(file) % 9000,
            "reason": f"classified by {rule}" if ok else f"classified as '{cls}' by {rule}; the manifest lists it as '{expected}'",
        })
    wrong = sum(1 for f in files if not f["ok"])
    by_rule = sum(1 for f in files if not f["rule"].startswith("default"))
    score = (len(files) - wrong) / len(files)
    return score, {
        "scores": {"accuracy": score, "brevity": max(0.0, 1 - len(rules) / (GROUPS * len(EXTENSIONS)))},
        "summary": f"{wrong} of {len(files)} files misclassified ({round(100 * wrong / len(files))} %); "
        f"{by_rule} files matched a rule, {len(files) - by_rule} fell back to their extension's default",
        "files": files,
    }


RECORD = re.compile(r"\bg(\d\d)/f\d{3}\.(\w+)\b((?:(?!\bg\d\d/f\d{3})[\s\S]){0,120}?)\bexpected\W{1,20}?([a-z]+)")


class Model:
    def __init__(self) -> None:
        self.prompt_chars: list[int] = []

    def __call__(self, prompt) -> str:
        text = prompt if isinstance(prompt, str) else "\n\n".join(m["content"] for m in prompt)
        self.prompt_chars.append(len(text))
        m = re.search(r"# Current text of \"[^\"]+\"\s+```+\n([\s\S]*?)\n```+", text) or re.search(
            r"current parameter value is:\n```+\n([\s\S]*?)\n```+", text
        )
        current = m.group(1) if m else SEED_TEXT
        have = rules_of(current)
        h = fnv(text)
        learned, seen = [], set()
        for r in RECORD.finditer(text):
            group, ext, cls = int(r.group(1)), r.group(2), r.group(4)
            key = f"g{group:02d}/*.{ext}"
            if key in seen or cls not in CLASSES:
                continue
            seen.add(key)
            if cls == DEFAULT_CLASS[ext] or any(g == group and e == ext for g, e, _, _ in have):
                continue
            if fnv(f"{h}|{key}") % 1000 < LEARN:
                learned.append(f"{key} => {cls}")
        kept = [line for line in current.split("\n") if not line.startswith("# v")]
        return "```\n" + "\n".join([*kept, *learned, f"# v{h % 100000}"]) + "\n```"


def test_score(text: str) -> float:
    rules = rules_of(text)
    total = 0.0
    for m in TESTSET:
        total += sum(1 for f in m["files"] if classify(rules, f)[0] == true_class(*parse(f))) / len(m["files"])
    return total / len(TESTSET)


def run(budget: int, seed: int, single: bool) -> dict:
    model = Model()
    config = GEPAConfig(
        engine=EngineConfig(max_metric_calls=budget, seed=seed, run_dir=None, capture_stdio=False),
        reflection=ReflectionConfig(reflection_lm=model),
    )
    if single:
        only = DATASET[0]
        result = optimize_anything(SEED_TEXT, evaluator=lambda c: evaluate(c, only), config=config)
        best = result.best_candidate
        score = evaluate(best if isinstance(best, str) else next(iter(best.values())), only)[0]
    else:
        result = optimize_anything(SEED_TEXT, evaluator=evaluate, dataset=DATASET, valset=VALSET, config=config)
        best = result.best_candidate
        score = test_score(best if isinstance(best, str) else next(iter(best.values())))
    return {"seed": seed, "score": score, "spent": result.total_metric_calls, "promptChars": model.prompt_chars}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budgets", default="60,150,300")
    args = parser.parse_args()
    cells = []
    cases = [(int(b), False) for b in args.budgets.split(",")] + [(30, True)]
    for budget, single in cases:
        runs = [run(budget, seed, single) for seed in range(args.seeds)]
        scores = [r["score"] for r in runs]
        prompts = [c for r in runs for c in r["promptChars"]]
        cell = {
            "shape": "single-task" if single else "generalization",
            "budget": budget,
            "runs": len(runs),
            "testMean": statistics.mean(scores),
            "testSd": statistics.stdev(scores) if len(scores) > 1 else 0.0,
            "spentMean": statistics.mean(r["spent"] for r in runs),
            "promptMeanChars": round(statistics.mean(prompts)) if prompts else 0,
            "promptMaxChars": max(prompts) if prompts else 0,
            "scores": scores,
        }
        cells.append(cell)
        print(f"{cell['shape']} {budget}: {cell['testMean']:.3f} ± {cell['testSd']:.3f} spent {cell['spentMean']:.1f} prompt {cell['promptMeanChars']}, {cell['promptMaxChars']}", flush=True)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results", "side-info-reference.json")
    with open(out, "w") as f:
        commit = open(os.path.join(REF, "COMMIT")).read().strip() if os.path.exists(os.path.join(REF, "COMMIT")) else None
        json.dump({"reference": commit, "python": sys.version.split()[0], "seeds": args.seeds, "cells": cells}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
