"""Runs the reference library gepa-ai/gepa on the engine bench's synthetic task
(task.py, the port of bench/task.ts) and records its figures beside ours.

    GEPA_REF=/path/to/gepa-checkout python3 bench/reference/run.py quality
    GEPA_REF=/path/to/gepa-checkout python3 bench/reference/run.py latency
    GEPA_REF=/path/to/gepa-checkout python3 bench/reference/run.py table

`quality`: every setting x budgets 500/1000/2000 x seeds 0-9 at zero latency.
`latency`: every setting at budget 1000, every task example call sleeping
20 ms (at most 16 in flight), every reflection call 50 ms; wall time measured.
`table`: writes bench/reference/RESULTS.md from the JSON results.

`--task 2x16` (default: issue 21's comparable task, results in
bench/results/reference.json) or `--task 4x8` (the task of
bench/latencyQuality.ts, results in bench/results/reference-4x8.json).
Each finished (setting, budget) cell is merged into the JSON at once, so an
interrupted run keeps what it measured; `--only-missing` skips cells already
there. Options: --settings a,b  --budgets 500,1000  --seeds 0-9
--jobs N (processes running seeds side by side; at most 2).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep bench/reference free of __pycache__
sys.path.insert(0, HERE)

from task import COMPARABLE, Adapter, Counters, Provider, ReflectionModel, Task, TaskOptions  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
RESULTS_MD = os.path.join(HERE, "RESULTS.md")

# "2x16" is issue 21's comparable task; "4x8" is the task of our latency x
# quality bench (bench/latencyQuality.ts, latencyQualityTask); "1x32" the same
# keywords in one component (bench/concurrency.ts `tasks`)
TASKS: dict[str, TaskOptions] = {
    "2x16": COMPARABLE,
    "4x8": TaskOptions(
        components=4, keywords_per_component=8, train_size=120, val_size=30, test_size=300, learn_permille=300
    ),
    # one component owning every keyword: the common case (one system prompt)
    "1x32": TaskOptions(
        components=1, keywords_per_component=32, train_size=120, val_size=30, test_size=300, learn_permille=300
    ),
    # the same tasks where a rewrite drops a keyword it had 15 % of the time (children regress)
    "1x32r": TaskOptions(
        components=1, keywords_per_component=32, train_size=120, val_size=30, test_size=300, learn_permille=300,
        forget_permille=150,
    ),
    "2x16r": TaskOptions(
        components=2, keywords_per_component=16, train_size=120, val_size=30, test_size=300, learn_permille=300,
        forget_permille=150,
    ),
    "4x8r": TaskOptions(
        components=4, keywords_per_component=8, train_size=120, val_size=30, test_size=300, learn_permille=300,
        forget_permille=150,
    ),
}


def results_json(task_name: str) -> str:
    suffix = "" if task_name == "2x16" else f"-{task_name}"
    return os.path.join(ROOT, "bench", "results", f"reference{suffix}.json")

TASK_LATENCY_MS = 20
LLM_LATENCY_MS = 50
MAX_IN_FLIGHT = 16
LATENCY_BUDGET = 1000
# set from --no-workaround; read in worker processes through the environment
WORKAROUND = os.environ.get("REFBENCH_NO_WORKAROUND") != "1"

# label -> (sampling strategy, selection strategy) as constructed in the reference
# (gepa.strategies.proposal_sampling / proposal_selection); None = its default
SETTINGS: dict[str, tuple[str, str]] = {
    "sequential": ("SingleMutationSampling() [default]", "AllImprovements() [default]"),
    "independent2-best": ("IndependentSampling(2)", "BestImprovement()"),
    "independent4-all": ("IndependentSampling(4)", "AllImprovements()"),
    "sameparent2-best": ("SameParentSampling(2)", "BestImprovement()"),
    "independent4-best": ("IndependentSampling(4)", "BestImprovement()"),
    # the same with module_selector="all" (every component rewritten by each proposal)
    "sequential-allcomponents": ("SingleMutationSampling() [default]", "AllImprovements() [default]"),
    "independent2-best-allcomponents": ("IndependentSampling(2)", "BestImprovement()"),
    "independent4-best-allcomponents": ("IndependentSampling(4)", "BestImprovement()"),
}


def module_selector(label: str) -> str:
    return "all" if label.endswith("-allcomponents") else "round_robin"


def strategies(label: str):
    from gepa.strategies.proposal_sampling import IndependentSampling, SameParentSampling
    from gepa.strategies.proposal_selection import AllImprovements, BestImprovement

    return {
        "sequential": (None, None),
        "independent2-best": (IndependentSampling(2), BestImprovement()),
        "independent4-all": (IndependentSampling(4), AllImprovements()),
        "sameparent2-best": (SameParentSampling(2), BestImprovement()),
        "independent4-best": (IndependentSampling(4), BestImprovement()),
    }[label.removesuffix("-allcomponents")]


class _ZeroWeightSafeRng:
    """Wraps the merge proposer's random.Random for one call of the
    reference's `find_common_ancestor_pair`, which picks a common ancestor with
    `rng.choices(..., weights=<validation scores>)`: when every candidate
    common ancestor scores 0 (on this task the seed does) Python raises
    "Total of weights must be greater than zero" and the run dies. Here that
    one case falls back to a uniform pick, which draws one `random()` just as
    the weighted pick would; every other call is passed through unchanged, so
    runs that never hit the case are exactly the reference's."""

    def __init__(self, rng: Any, hits: list[int]):
        self._rng = rng
        self._hits = hits

    def choices(self, population, weights=None, *, cum_weights=None, k=1):
        if weights is not None and cum_weights is None and sum(weights) <= 0:
            self._hits[0] += 1
            return self._rng.choices(population, k=k)
        return self._rng.choices(population, weights=weights, cum_weights=cum_weights, k=k)

    def __getattr__(self, name: str):
        return getattr(self._rng, name)


_merge_fallbacks = [0]


def install_merge_workaround() -> None:
    import gepa.proposer.merge as merge

    if getattr(merge, "_refbench_patched", False):
        return
    original = merge.find_common_ancestor_pair

    def patched(rng, *args, **kwargs):
        return original(_ZeroWeightSafeRng(rng, _merge_fallbacks), *args, **kwargs)

    merge.find_common_ancestor_pair = patched
    merge._refbench_patched = True


class SilentLogger:
    def log(self, message: str) -> None:
        pass


def run_once(label: str, budget: int, seed: int, latency: bool, task_name: str = "2x16", realistic: bool = False) -> dict[str, Any]:
    """One optimization run; returns its figures. `realistic`: the provider
    of bench/provider.ts (task calls 1 s, reflections 10 s, log-normal sd 0.5,
    300 requests per minute, 10 ms per profile second) instead of 20/50 ms."""
    import gepa

    if WORKAROUND:
        install_merge_workaround()
    _merge_fallbacks[0] = 0
    task = Task(TASKS[task_name])
    counters = Counters()
    provider = Provider(seed) if realistic else None
    adapter = Adapter(task, latency_ms=TASK_LATENCY_MS if latency else 0, max_in_flight=MAX_IN_FLIGHT, counters=counters, provider=provider)
    model = ReflectionModel(task, latency_ms=LLM_LATENCY_MS if latency else 0, counters=counters, provider=provider)
    sampling, selection = strategies(label)
    t0 = time.perf_counter()
    try:
        result = gepa.optimize(
            seed_candidate=task.seed_candidate,
            trainset=task.trainset,
            valset=task.valset,
            adapter=adapter,
            reflection_lm=model,
            candidate_selection_strategy="pareto",
            reflection_minibatch_size=3,
            use_merge=True,
            max_metric_calls=budget,
            seed=seed,
            logger=SilentLogger(),
            sampling_strategy=sampling,
            selection_strategy=selection,
            module_selector=module_selector(label),
        )
    finally:
        adapter.close()
    wall = time.perf_counter() - t0
    best = result.best_candidate
    assert isinstance(best, dict)
    return {
        "seed": seed,
        "test": task.test_score(best),
        "val": task.val_score(best),
        "metricCalls": result.total_metric_calls,
        "taskCalls": counters.task_calls,
        "reflectionCalls": counters.model_calls,
        "candidates": result.num_candidates,
        "maxTaskCallsInFlight": counters.task_max_in_flight,
        "maxReflectionCallsInFlight": counters.model_max_in_flight,
        # merges whose common ancestors all scored 0: each would have ended the run with
        # ValueError in the unpatched reference (see _ZeroWeightSafeRng)
        "mergeZeroWeightFallbacks": _merge_fallbacks[0],
        "wallSeconds": wall,
        # the realistic profile's wall in its own seconds, and its reflections on the critical path
        **({"profileWallSeconds": wall / provider.scale_s, "criticalReflections": counters.critical_reflections} if provider is not None else {}),
    }


def _run_args(args: tuple[str, int, int, bool, str, bool]) -> dict[str, Any]:
    return run_once(*args)


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def sd(xs: list[float]) -> float:
    return statistics.stdev(xs) if len(xs) > 1 else 0.0


def summarize(runs: list[dict[str, Any]], budget: int, latency: bool) -> dict[str, Any]:
    tests = [r["test"] for r in runs]
    calls = [r["metricCalls"] for r in runs]
    cell: dict[str, Any] = {
        "budget": budget,
        "seeds": [r["seed"] for r in runs],
        "testScores": tests,
        "testMean": mean(tests),
        "testSd": sd(tests),
        "valMean": mean([r["val"] for r in runs]),
        "metricCalls": calls,
        "metricCallsMean": mean(calls),
        "metricCallsMax": max(calls),
        "runsOverBudget": sum(1 for c in calls if c > budget),
        "candidatesMean": mean([r["candidates"] for r in runs]),
        # runs the unpatched reference would not have finished (ValueError in its merge proposer)
        "runsHittingMergeBug": sum(1 for r in runs if r["mergeZeroWeightFallbacks"] > 0),
        "reflectionCallsMean": mean([r["reflectionCalls"] for r in runs]),
        "runs": runs,
    }
    if latency:
        walls = [r["wallSeconds"] for r in runs]
        cell["wallSeconds"] = walls
        cell["wallMedianSeconds"] = statistics.median(walls)
        cell["maxTaskCallsInFlight"] = max(r.get("maxTaskCallsInFlight", 0) for r in runs)
        cell["maxReflectionCallsInFlight"] = max(r.get("maxReflectionCallsInFlight", 0) for r in runs)
        if all("profileWallSeconds" in r for r in runs):
            cell["profileWallMedianSeconds"] = statistics.median([r["profileWallSeconds"] for r in runs])
            cell["criticalReflectionsMean"] = mean([r["criticalReflections"] for r in runs])
    else:
        cell["engineSecondsPerMetricCallMean"] = mean([r["wallSeconds"] / max(1, r["metricCalls"]) for r in runs])
    return cell


def reference_commit() -> str:
    ref = os.environ.get("GEPA_REF", "")
    commit_file = os.path.join(ref, "COMMIT")
    if os.path.exists(commit_file):
        return open(commit_file).read().strip()
    try:
        return subprocess.check_output(["git", "-C", ref, "rev-parse", "HEAD"], text=True, stderr=subprocess.DEVNULL).strip()
    except Exception:
        return "unknown"


def load(task_name: str) -> dict[str, Any]:
    path = results_json(task_name)
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return {}


def save(doc: dict[str, Any], task_name: str) -> None:
    path = results_json(task_name)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def header(task_name: str) -> dict[str, Any]:
    options = TASKS[task_name]
    return {
        "reference": "gepa-ai/gepa",
        "referenceCommit": reference_commit(),
        "python": platform.python_version(),
        "pythonHashSeed": os.environ.get("PYTHONHASHSEED"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared)",
        "taskName": task_name,
        "task": {
            "components": options.components,
            "keywordsPerComponent": options.keywords_per_component,
            "trainSize": options.train_size,
            "valSize": options.val_size,
            "testSize": options.test_size,
            "learnPermille": options.learn_permille,
            "forgetPermille": options.forget_permille,
        },
        "optimize": {
            "candidate_selection_strategy": "pareto",
            "reflection_minibatch_size": 3,
            "use_merge": True,
            "max_merge_invocations": "5 (default)",
            "merge_val_overlap_floor": "5 (default)",
            "module_selector": "round_robin (default; all in the settings named *-allcomponents)",
            "frontier_type": "instance (default)",
            "acceptance_criterion": "strict_improvement (default)",
            "skip_perfect_score": "True (default)",
            "cache_evaluation": "False (default)",
            "val_evaluation_policy": "full_eval (default)",
        },
        "latencyConfig": {
            "budget": LATENCY_BUDGET,
            "taskMsPerExample": TASK_LATENCY_MS,
            "maxTaskCallsInFlight": MAX_IN_FLIGHT,
            "reflectionMs": LLM_LATENCY_MS,
        },
        "settings": {
            k: {"sampling": v[0], "selection": v[1], "moduleSelector": module_selector(k)} for k, v in SETTINGS.items()
        },
        "mergeWorkaround": WORKAROUND,
    }


def parse_seeds(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(s) for s in text.split(",")]


def measure(
    mode: str, labels: list[str], budgets: list[int], seeds: list[int], jobs: int, only_missing: bool, task_name: str, realistic: bool = False
) -> None:
    latency = mode == "latency"
    section = ("latencyRealistic" if realistic else "latencyBound") if latency else "quality"
    for label in labels:
        for budget in budgets:
            doc = load(task_name)
            if only_missing and str(budget) in doc.get(section, {}).get(label, {}):
                continue
            t0 = time.perf_counter()
            work = [(label, budget, seed, latency, task_name, realistic) for seed in seeds]
            if jobs > 1:
                with ProcessPoolExecutor(max_workers=jobs) as pool:
                    runs = list(pool.map(_run_args, work))
            else:
                runs = [_run_args(w) for w in work]
            cell = summarize(runs, budget, latency)
            doc = load(task_name)
            doc.update(header(task_name))
            doc.setdefault(section, {}).setdefault(label, {})[str(budget)] = cell
            save(doc, task_name)
            extra = f", wall median {cell['wallMedianSeconds']:.2f} s" if latency else ""
            if realistic:
                extra += f" ({cell['profileWallMedianSeconds']:.0f} profile s, {cell['reflectionCallsMean']:.0f} reflections, {cell['criticalReflectionsMean']:.0f} on the critical path)"
            print(
                f"{task_name} {section} {label} budget {budget}: test {cell['testMean']:.3f} ± {cell['testSd']:.3f}, "
                f"calls {cell['metricCallsMean']:.0f} (max {cell['metricCallsMax']}){extra}  "
                f"[{time.perf_counter() - t0:.0f} s]",
                flush=True,
            )


def all_components(setting: dict[str, Any]) -> str:
    return " + module_selector=all" if setting.get("moduleSelector") == "all" else ""


def task_tables(doc: dict[str, Any], task_name: str) -> list[str]:
    """The markdown tables of one task's results."""
    json_name = os.path.relpath(results_json(task_name), ROOT)
    lines = [
        f"## Task {task_name}: " + ", ".join(f"{k} {v}" for k, v in doc.get("task", {}).items()),
        "",
        f"From `{json_name}`. Reference gepa-ai/gepa at `{doc.get('referenceCommit')}`, Python {doc.get('python')}, "
        f"{doc.get('machine')}; PYTHONHASHSEED={doc.get('pythonHashSeed')}; merge workaround {'on' if doc.get('mergeWorkaround') else 'off'}.",
        "",
        "### Quality per budget (zero latency, seeds 0-9)",
        "",
        "| setting | sampling + selection | budget | held-out mean | sd | metric calls mean / max | over budget | candidates | runs hitting the merge bug |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    settings = doc.get("settings", {})
    for label, by_budget in doc.get("quality", {}).items():
        s = settings.get(label, {})
        for budget in sorted(by_budget, key=int):
            c = by_budget[budget]
            lines.append(
                f"| {label} | {s.get('sampling')} + {s.get('selection')}{all_components(s)} | {budget} | {c['testMean']:.3f} | {c['testSd']:.3f} "
                f"| {c['metricCallsMean']:.0f} / {c['metricCallsMax']} | {c['runsOverBudget']}/{len(c['seeds'])} "
                f"| {c['candidatesMean']:.1f} | {c['runsHittingMergeBug']}/{len(c['seeds'])} |"
            )
    lat = doc.get("latencyBound", {})
    if lat:
        lines += [
            "",
            f"### Latency-bound (budget {LATENCY_BUDGET}; task {TASK_LATENCY_MS} ms per example, at most "
            f"{MAX_IN_FLIGHT} in flight; reflection {LLM_LATENCY_MS} ms)",
            "",
            f"Utilization bound: {LATENCY_BUDGET} x {TASK_LATENCY_MS} ms / {MAX_IN_FLIGHT} = "
            f"{LATENCY_BUDGET * TASK_LATENCY_MS / MAX_IN_FLIGHT / 1000:.2f} s. In flight: the most task / reflection "
            "calls observed at once in any run of the row.",
            "",
            "| setting | seeds | wall median (s) | held-out mean | sd | metric calls mean / max | reflection calls | in flight task / reflection | runs hitting the merge bug | same result as at zero latency |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for label, by_budget in lat.items():
            if str(LATENCY_BUDGET) not in by_budget:
                continue
            c = by_budget[str(LATENCY_BUDGET)]
            zero = {r["seed"]: r for r in doc.get("quality", {}).get(label, {}).get(str(LATENCY_BUDGET), {}).get("runs", [])}
            same = sum(
                1
                for r in c["runs"]
                if r["seed"] in zero
                and (r["test"], r["val"], r["metricCalls"], r["candidates"])
                == (zero[r["seed"]]["test"], zero[r["seed"]]["val"], zero[r["seed"]]["metricCalls"], zero[r["seed"]]["candidates"])
            )
            compared = sum(1 for r in c["runs"] if r["seed"] in zero)
            lines.append(
                f"| {label} | {len(c['seeds'])} | {c['wallMedianSeconds']:.2f} | {c['testMean']:.3f} | {c['testSd']:.3f} "
                f"| {c['metricCallsMean']:.0f} / {c['metricCallsMax']} | {c['reflectionCallsMean']:.0f} "
                f"| {c.get('maxTaskCallsInFlight', '?')} / {c.get('maxReflectionCallsInFlight', '?')} "
                f"| {c['runsHittingMergeBug']}/{len(c['seeds'])} | {same}/{compared} |"
            )
    real = doc.get("latencyRealistic", {})
    if real:
        lines += [
            "",
            f"### Realistic profile (budget {LATENCY_BUDGET}; `--profile realistic`: the provider of bench/provider.ts, task calls 1 s and "
            "reflections 10 s, log-normal sd 0.5, 300 requests per minute for both, 10 ms per profile second, "
            f"at most {MAX_IN_FLIGHT} task calls in flight)",
            "",
            "| setting | seeds | wall median (profile s) | held-out mean | sd | metric calls mean / max | reflection calls | on the critical path |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for label, by_budget in real.items():
            if str(LATENCY_BUDGET) not in by_budget:
                continue
            c = by_budget[str(LATENCY_BUDGET)]
            lines.append(
                f"| {label} | {len(c['seeds'])} | {c.get('profileWallMedianSeconds', 0):.0f} | {c['testMean']:.3f} | {c['testSd']:.3f} "
                f"| {c['metricCallsMean']:.0f} / {c['metricCallsMax']} | {c['reflectionCallsMean']:.0f} | {c.get('criticalReflectionsMean', 0):.0f} |"
            )
    return lines + [""]


def table() -> None:
    first = load("2x16") or next((load(t) for t in TASKS if load(t)), {})
    lines = [
        "# The reference (Python gepa) on the engine bench's task",
        "",
        "Written by `bench/reference/run.py table`; how the runs are set up: `bench/reference/README.md`.",
        "",
        "`gepa.optimize` with "
        + ", ".join(f"{k}={v}" for k, v in first.get("optimize", {}).items())
        + "; max_metric_calls = the budget; seed = the run's seed. Held-out score: the mean score of "
        "`result.best_candidate` (the reference's best on validation) on the 300 test examples no run sees. "
        "Metric calls: the reference's own count (`result.total_metric_calls`), equal to the task calls made.",
        "",
    ]
    for task_name in TASKS:
        doc = load(task_name)
        if doc:
            lines += task_tables(doc, task_name)
    with open(RESULTS_MD, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


def main() -> None:
    # The reference iterates a set of component names in its merge proposer
    # (gepa/proposer/merge.py), so with merge on its result for a given seed
    # depends on Python's string-hash randomization: pin it, so that a run is
    # a function of its seed (override by setting PYTHONHASHSEED yourself).
    if os.environ.get("PYTHONHASHSEED") is None:
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["quality", "latency", "table", "one"])
    p.add_argument("--settings", default=",".join(SETTINGS))
    p.add_argument("--budgets", default="")
    p.add_argument("--seeds", default="0-9")
    p.add_argument("--jobs", type=int, default=0)
    p.add_argument("--only-missing", action="store_true")
    p.add_argument("--task", default="2x16", choices=list(TASKS))
    p.add_argument("--no-workaround", action="store_true", help="run the reference's merge proposer unpatched")
    p.add_argument("--profile", default="", choices=["", "realistic"], help="latency mode: the realistic provider of bench/provider.ts")
    a = p.parse_args()
    if a.no_workaround:
        global WORKAROUND
        WORKAROUND = False
        os.environ["REFBENCH_NO_WORKAROUND"] = "1"
    labels = [s for s in a.settings.split(",") if s]
    for label in labels:
        if label not in SETTINGS:
            print(f"--settings: unknown setting '{label}' (known: {', '.join(SETTINGS)})", file=sys.stderr)
            sys.exit(2)
    if not os.environ.get("GEPA_REF"):
        print("GEPA_REF: set it to a checkout of gepa-ai/gepa (its src/ holds the gepa package)", file=sys.stderr)
        sys.exit(2)
    if a.jobs > 2:
        print("--jobs: at most 2 (the bench machine has 2 cores)", file=sys.stderr)
        sys.exit(2)
    if a.mode == "table":
        table()
        return
    seeds = parse_seeds(a.seeds)
    if a.mode == "one":
        budgets = [int(b) for b in (a.budgets or "1000").split(",")]
        for label in labels:
            for b in budgets:
                for s in seeds:
                    print(json.dumps({"setting": label, "budget": b, **run_once(label, b, s, False, a.task)}), flush=True)
        return
    latency = a.mode == "latency"
    budgets = [int(b) for b in (a.budgets or (str(LATENCY_BUDGET) if latency else "500,1000,2000")).split(",")]
    jobs = a.jobs or (1 if latency else 2)
    measure(a.mode, labels, budgets, seeds, jobs, a.only_missing, a.task, a.profile == "realistic")
    table()


if __name__ == "__main__":
    main()
