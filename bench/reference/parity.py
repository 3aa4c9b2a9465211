"""Parity check of the Python port (task.py) against bench/task.ts.

Prints, for fixed inputs, what the task computes: the id -> category scatter,
adapter scores and feedback for a few fixed candidate texts, the reflective
dataset records, FNV-1a hashes, and the simulated reflection model's answers
to fixed prompt texts. bench/reference/parity.ts prints the same lines from
the TypeScript task, so the two outputs must be identical:

    diff <(python3 bench/reference/parity.py) <(npx tsx bench/reference/parity.ts)

Needs the reference checkout on GEPA_REF only for its EvaluationBatch class.
"""

import json
import os
import sys

sys.dont_write_bytecode = True  # keep bench/reference free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from task import COMPARABLE, Adapter, Task, TaskOptions, fnv  # noqa: E402

task = Task(COMPARABLE)
adapter = Adapter(task)


def kw_list(component: int, ks: range) -> str:
    return "".join(f"c{component}k{k} " for k in ks)


CANDIDATES = [
    ("seed", task.seed_candidate),
    ("some", {"component_0": "[c0] know: c0k0 c0k1 c0k2 | v1", "component_1": "[c1] know: c1k5 | v9"}),
    ("all of c0", {"component_0": f"[c0] know: {kw_list(0, range(16))}| v2", "component_1": "[c1] know: | v0"}),
    ("everything", {"component_0": f"[c0] know: {kw_list(0, range(16))}| v3", "component_1": f"[c1] know: {kw_list(1, range(16))}| v4"}),
    ("no trailing space", {"component_0": "[c0] know: c0k3| v5", "component_1": "[c1] know:c1k3 | v6"}),
]

PROMPTS = [
    "",
    "no component here",
    "```\n[c0] know: | v0\n```\nWrong: the instructions must mention 'c0k3'. Wrong: the instructions must mention 'c1k2'.",
    "[c1] know: c1k2 | v77\nmust mention 'c1k2' then must mention 'c0k1' then must mention 'c1k9' and 'c1k4'",
    "[c0] know: c0k1  c0k2 | v3 must mention 'c0k7' must mention 'c0k8' é ü 𝄞",
] + [f"[c{i % 2}] know: | v{i}\nmust mention 'c{i % 2}k{i % 16}'" for i in range(40)]


def f6(x: float) -> str:
    return f"{x:.6f}"


def line(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))


line({"categories": [ex.category for ex in task.trainset[:40]]})
line({"val": [ex.category for ex in task.valset], "test_head": [ex.category for ex in task.testset[:20]]})
for name, cand in CANDIDATES:
    ev = adapter.evaluate(task.trainset[:12], cand, capture_traces=True)
    line({
        "candidate": name,
        "train": f6(task.mean_on(task.trainset, cand)),
        "val": f6(task.val_score(cand)),
        "test": f6(task.test_score(cand)),
        "minibatch_scores": [f6(s) for s in ev.scores],
        "outputs": ev.outputs,
    })
    records = adapter.make_reflective_dataset(cand, adapter.evaluate(task.trainset[:3], cand, capture_traces=True), ["component_1"])
    line({"candidate": name, "records": records})
for p in PROMPTS:
    line({"fnv": fnv(p), "answer": task.reflect(p)})

# one component owning every keyword (run.py --task 1x32)
one = Task(TaskOptions(components=1, keywords_per_component=32, train_size=120, val_size=30, test_size=300, learn_permille=300))
one_adapter = Adapter(one)
line({"one": [ex.category for ex in one.trainset[:40]], "seed": one.seed_candidate})
for cand in [one.seed_candidate, {"component_0": f"[c0] know: {kw_list(0, range(0, 32, 3))}| v1"}]:
    ev = one_adapter.evaluate(one.trainset[:12], cand, capture_traces=True)
    line({"one_val": f6(one.val_score(cand)), "one_test": f6(one.test_score(cand)), "scores": [f6(x) for x in ev.scores], "outputs": ev.outputs})
for i in range(20):
    p = f"[c0] know: | v{i}\nmust mention 'c0k{i}' must mention 'c0k{31 - i}'"
    line({"one_answer": one.reflect(p)})

# a rewrite that may drop a keyword it had (run.py --task 1x32r, forget_permille)
forgets = Task(TaskOptions(components=1, keywords_per_component=32, train_size=120, val_size=30, test_size=300, learn_permille=300, forget_permille=150))
for i in range(40):
    p = f"[c0] know: {kw_list(0, range(i % 7, 32, 5))}| v{i}\nmust mention 'c0k{(3 * i) % 32}'"
    line({"forget_answer": forgets.reflect(p)})
