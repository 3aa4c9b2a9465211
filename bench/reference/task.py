"""The engine bench's synthetic keyword task (bench/task.ts), in Python, for
running the reference library gepa-ai/gepa on exactly the same problem.

Same as the TypeScript task, line for line in behaviour:

- examples: id -> category by the same multiplicative scatter, train ids
  0..trainSize-1, validation ids next, test ids after those;
- the seed candidate `[cN] know: | v0` per component;
- scoring: an example is correct iff the text of the component owning its
  category contains ` <keyword> `; the same outputs and feedback strings;
- the reflective dataset: the same three record keys for every component asked;
- the simulated reflection model: the same regexes over the prompt text, FNV-1a
  (over UTF-16 code units, like JavaScript's charCodeAt) of the prompt text,
  the same learnPermille rule, and the same answer inside a ``` fence.

The reference renders its own reflection prompt, so the hash of a prompt (and
therefore which proposals learn a keyword, and the nonces) differs from ours:
the randomness is statistically equivalent, not identical.

Latency (for the latency-bound runs) is added here, not in gepa: every task
example call sleeps `task_latency_ms` in a worker of one thread pool of
`max_in_flight` threads per run, and every reflection call sleeps
`llm_latency_ms` (batched reflection calls run in concurrent threads). With a
`Provider` (the realistic profile of bench/provider.ts) every call instead
waits for the provider's rate limit and a log-normal latency.
"""

from __future__ import annotations

import math
import os
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

_ref = os.environ.get("GEPA_REF")
if _ref:
    sys.path.insert(0, os.path.join(_ref, "src"))

_M32 = 0xFFFFFFFF


def fnv(text: str) -> int:
    """FNV-1a over UTF-16 code units, as bench/task.ts computes it."""
    h = 0x811C9DC5
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h ^= data[i] | (data[i + 1] << 8)
        h = (h * 0x01000193) & _M32
    return h


@dataclass(frozen=True)
class Example:
    id: int
    category: int


@dataclass(frozen=True)
class Trace:
    example: Example
    output: str
    score: float
    feedback: str


@dataclass(frozen=True)
class TaskOptions:
    components: int
    keywords_per_component: int
    train_size: int
    val_size: int
    test_size: int
    learn_permille: int
    # chance per 1000 reflections that the rewrite drops a keyword it had (bench/task.ts forgetPermille)
    forget_permille: int = 0


# the comparable-task settings of issue 21 (2 components x 16 keywords = 32 categories)
COMPARABLE = TaskOptions(
    components=2, keywords_per_component=16, train_size=120, val_size=30, test_size=300, learn_permille=300
)


@dataclass
class Counters:
    task_calls: int = 0
    evaluate_calls: int = 0
    model_calls: int = 0
    # the most task / reflection calls observed in flight at once (latency runs)
    task_in_flight: int = 0
    task_max_in_flight: int = 0
    model_in_flight: int = 0
    model_max_in_flight: int = 0
    # reflections started while no other was in flight (bench/provider.ts)
    critical_reflections: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class Provider:
    """The simulated provider of bench/provider.ts: every task and reflection
    call takes the rate limit's next slot (one request every 60 / rpm profile
    seconds, both kinds counted), waits for it, then sleeps a log-normal time
    around its median. One profile second lasts `ms_per_second` real
    milliseconds. The latencies come from a seeded generator in the order the
    calls arrive (not the same draws as ours: the calls arrive in another
    order), so compare medians over seeds."""

    def __init__(self, seed: int, task_seconds: float = 1.0, reflection_seconds: float = 10.0, sigma: float = 0.5, rpm: float = 300.0, ms_per_second: float = 10.0):
        import random

        self.random = random.Random(seed * 7919 + 17)
        self.task_seconds = task_seconds
        self.reflection_seconds = reflection_seconds
        self.sigma = sigma
        self.spacing_s = (60.0 / rpm) * ms_per_second / 1000.0
        self.scale_s = ms_per_second / 1000.0
        self.next_slot = 0.0
        self.lock = threading.Lock()

    def request(self, median_seconds: float) -> None:
        with self.lock:
            now = time.perf_counter()
            slot = max(now, self.next_slot)
            self.next_slot = slot + self.spacing_s
            latency = median_seconds * math.exp(self.sigma * self.random.gauss(0.0, 1.0)) * self.scale_s
        time.sleep(slot - now + latency)


class Task:
    def __init__(self, options: TaskOptions):
        self.options = options
        components = options.components
        self.categories = components * options.keywords_per_component
        n_train, n_val = options.train_size, options.val_size
        self.trainset = [self._example(i) for i in range(n_train)]
        self.valset = [self._example(n_train + i) for i in range(n_val)]
        self.testset = [self._example(n_train + n_val + i) for i in range(options.test_size)]
        self.seed_candidate = {f"component_{c}": f"[c{c}] know: | v0" for c in range(components)}

    def _example(self, id: int) -> Example:
        return Example(id=id, category=((id * 2654435761) & _M32) % self.categories)

    def component_of(self, category: int) -> int:
        return category % self.options.components

    def keyword_of(self, category: int) -> str:
        return f"c{self.component_of(category)}k{category // self.options.components}"

    def solve(self, ex: Example, candidate: dict[str, str]) -> Trace:
        keyword = self.keyword_of(ex.category)
        text = candidate.get(f"component_{self.component_of(ex.category)}", "")
        ok = f" {keyword} " in text
        return Trace(
            example=ex,
            output="correct" if ok else "wrong",
            score=1.0 if ok else 0.0,
            feedback="Correct." if ok else f"Wrong: the instructions must mention '{keyword}'.",
        )

    def mean_on(self, examples: list[Example], candidate: dict[str, str]) -> float:
        if not examples:
            return 0.0
        return sum(self.solve(ex, candidate).score for ex in examples) / len(examples)

    def val_score(self, candidate: dict[str, str]) -> float:
        return self.mean_on(self.valset, candidate)

    def test_score(self, candidate: dict[str, str]) -> float:
        return self.mean_on(self.testset, candidate)

    # ------------------------------------------------------------ the simulated reflection model
    def reflect(self, text: str) -> str:
        """The answer of bench/task.ts's reflection model to a prompt text."""
        current = _CURRENT.search(text)
        if current is None:
            return "I cannot tell which component this is."
        component = current.group(1)
        known = [w for w in current.group(2).split(" ") if w != ""]
        prefix = f"c{component}k"
        first_asked: str | None = None
        for m in _ASKED.finditer(text):
            kw = m.group(1)
            if kw.startswith(prefix) and kw not in known:
                first_asked = kw
                break
        h = fnv(text)
        learned = [first_asked] if first_asked is not None and h % 1000 < self.options.learn_permille else []
        forgotten = (
            known[(h >> 20) % len(known)] if known and (h // 1000) % 1000 < self.options.forget_permille else None
        )
        words = [w for w in known if w != forgotten] + learned
        body = f"[c{component}] know: {''.join(f'{w} ' for w in words)}| v{h % 100000}"
        return "Here is the improved text:\n```\n" + body + "\n```\n"


_CURRENT = re.compile(r"\[c(\d+)\] know: ([^|]*)\|")
_ASKED = re.compile(r"must mention '(c\d+k\d+)'")


def _prompt_text(prompt: Any) -> str:
    """Like LanguageModel.promptText: a string, or chat messages' contents joined."""
    if isinstance(prompt, str):
        return prompt
    return "\n\n".join(m["content"] if isinstance(m["content"], str) else str(m["content"]) for m in prompt)


class ReflectionModel:
    """The simulated reflection model as a gepa `LanguageModel` (a callable of
    the prompt), with `batch_complete` so the reference's batched reflection
    (several proposals per iteration) issues its calls concurrently, as it does
    with litellm.batch_completion."""

    def __init__(self, task: Task, latency_ms: float = 0.0, counters: Counters | None = None, provider: Provider | None = None):
        self.task = task
        self.latency_s = latency_ms / 1000.0
        self.counters = counters or Counters()
        self.provider = provider

    def __call__(self, prompt: Any) -> str:
        c = self.counters
        with c.lock:
            c.model_calls += 1
            if c.model_in_flight == 0:
                c.critical_reflections += 1
            c.model_in_flight += 1
            c.model_max_in_flight = max(c.model_max_in_flight, c.model_in_flight)
        try:
            if self.provider is not None:
                self.provider.request(self.provider.reflection_seconds)
            elif self.latency_s > 0:
                time.sleep(self.latency_s)
            return self.task.reflect(_prompt_text(prompt))
        finally:
            with c.lock:
                c.model_in_flight -= 1

    def batch_complete(self, messages_list: list[Any]) -> list[str]:
        if len(messages_list) <= 1 or (self.latency_s <= 0 and self.provider is None):
            return [self(m) for m in messages_list]
        with ThreadPoolExecutor(max_workers=len(messages_list)) as pool:
            return list(pool.map(self, messages_list))


class Adapter:
    """The task's adapter for gepa (a duck-typed GEPAAdapter).

    Per-example: with latency, every example of every batch is one task call
    that sleeps `task_latency_ms` in a worker of one shared pool of
    `max_in_flight` threads, so at most that many task calls are in flight
    across everything the engine evaluates at once. `batch_evaluate` (used by
    the reference for several parents/children/validations per iteration)
    submits the examples of all its items to that pool together.
    """

    propose_new_texts = None

    def __init__(self, task: Task, latency_ms: float = 0.0, max_in_flight: int = 16, counters: Counters | None = None, provider: Provider | None = None):
        self.task = task
        self.latency_s = latency_ms / 1000.0
        self.counters = counters or Counters()
        self.provider = provider
        self.pool = ThreadPoolExecutor(max_workers=max_in_flight) if self.latency_s > 0 or provider is not None else None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)

    def _call(self, ex: Example, candidate: dict[str, str]) -> Trace:
        c = self.counters
        with c.lock:
            c.task_calls += 1
            c.task_in_flight += 1
            c.task_max_in_flight = max(c.task_max_in_flight, c.task_in_flight)
        try:
            if self.provider is not None:
                self.provider.request(self.provider.task_seconds)
            elif self.latency_s > 0:
                time.sleep(self.latency_s)
            return self.task.solve(ex, candidate)
        finally:
            with c.lock:
                c.task_in_flight -= 1

    def _batch(self, traces: list[Trace], capture_traces: bool):
        from gepa.core.adapter import EvaluationBatch

        return EvaluationBatch(
            outputs=[t.output for t in traces],
            scores=[t.score for t in traces],
            trajectories=traces if capture_traces else None,
        )

    def evaluate(self, batch: list[Example], candidate: dict[str, str], capture_traces: bool = False):
        return self.batch_evaluate([(candidate, batch)], capture_traces=capture_traces)[0]

    def batch_evaluate(self, items: list[tuple[dict[str, str], list[Example]]], *, capture_traces: bool = True):
        with self.counters.lock:
            self.counters.evaluate_calls += len(items)
        if self.pool is None:
            results = [[self._call(ex, cand) for ex in batch] for cand, batch in items]
        else:
            futures = [[self.pool.submit(self._call, ex, cand) for ex in batch] for cand, batch in items]
            results = [[f.result() for f in fs] for fs in futures]
        return [self._batch(traces, capture_traces) for traces in results]

    def make_reflective_dataset(self, candidate: dict[str, str], eval_batch, components_to_update: list[str]):
        records = [
            {
                "Inputs": f"a question of category {t.example.category}",
                "Generated Outputs": t.output,
                "Feedback": t.feedback,
            }
            for t in (eval_batch.trajectories or [])
        ]
        return {c: records for c in components_to_update}
