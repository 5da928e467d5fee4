"""A task's side of a step: the handlers a task's Dask worker answers, and the step itself.

A master sends each task of a run one ``placeviz_step`` message (the first time with the task's
program, see ``program.py``). The task runs its stages in order; before a stage it waits in its
``Mailbox`` for what other tasks send it with ``placeviz_tensors``, over Dask's comms (NumPy
buffers travel as frames), never through the scheduler or the client. The reply carries the
values the client fetched and what the task saw: its ops' events, the tensors it sent (bytes,
when), those it received, and how long each stage waited for them; a step that failed or was
aborted replies with what it saw until then, and the error.

Everything happens on the worker's event loop: a stage's ops run there too, between the
messages, so no thread hands a tensor to another. A stage holding an op that may wait for
another run (``OpDef.waits``: a queue's dequeue) runs on a thread instead, so the loop keeps
receiving what would wake it.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import functools
import os
import time
from collections.abc import Sequence
from typing import Any

from placeviz.cluster.frames import array_parts, as_frames, pickled, tensors_of
from placeviz.cluster.program import destinations
from placeviz.cluster.task import RUNTIME, StageFailed, TaskRuntime, portable, reported
from placeviz.events.recorder import EventBatch
from placeviz.graph.cancellation import Cancellation

# Steps the master gave up on, remembered so that tensors arriving late for them are dropped.
_ABORTED_KEPT = 256


class StepAborted(Exception):
    """The master ended the step (another task of it failed): stop waiting for its tensors."""


class Mailbox:
    """What other tasks sent for each step, until the step's stages take it (all on the
    worker's event loop)."""

    def __init__(self) -> None:
        self._boxes: dict[str, dict[str, Any]] = collections.defaultdict(dict)
        self._arrivals: dict[str, list[list[Any]]] = collections.defaultdict(list)
        self._waiting: dict[str, tuple[Sequence[str], asyncio.Future[None]]] = {}
        self._aborted: collections.OrderedDict[str, None] = collections.OrderedDict()

    def put(self, step: str, sender: str, values: dict[str, Any], tokens: Sequence[str]) -> None:
        if step in self._aborted:
            return
        box = self._boxes[step]
        box.update(values)
        box.update(dict.fromkeys(tokens))
        self._arrivals[step].append([sender, list(values), time.perf_counter_ns()])
        waiting = self._waiting.get(step)
        if waiting is not None and all(name in box for name in waiting[0]):
            del self._waiting[step]
            waiting[1].set_result(None)

    async def take(self, step: str, names: Sequence[str]) -> dict[str, Any]:
        """Wait until every one of ``names`` arrived for ``step``; they leave the box."""
        box = self._boxes[step]
        if not all(name in box for name in names):
            if step in self._aborted:
                raise StepAborted(step)
            arrived = asyncio.get_running_loop().create_future()
            self._waiting[step] = (names, arrived)
            await arrived
        return {name: box.pop(name) for name in names}

    def abort(self, step: str) -> None:
        self._aborted[step] = None
        while len(self._aborted) > _ABORTED_KEPT:
            self._aborted.popitem(last=False)
        self._boxes.pop(step, None)
        self._arrivals.pop(step, None)
        waiting = self._waiting.pop(step, None)
        if waiting is not None:
            waiting[1].set_exception(StepAborted(step))

    def finish(self, step: str) -> list[list[Any]]:
        """The step's arrivals ([sender, tensor names, arrival time]); its box is dropped."""
        self._boxes.pop(step, None)
        return self._arrivals.pop(step, [])


class StepServer:
    """The handlers of one task's worker: ops, steps, tensors from other tasks, aborts."""

    def __init__(self, worker: Any, runtime: TaskRuntime = RUNTIME) -> None:
        self.worker = worker
        self.runtime = runtime
        self.mailbox = Mailbox()
        self.programs: dict[str, list[dict[str, Any]]] = {}
        # messages handled, by kind ('step', 'program', 'tensors', 'ops'): what a step costs
        self.handled: collections.Counter[str] = collections.Counter()
        self._threads = concurrent.futures.ThreadPoolExecutor(16, "placeviz-waiting-stage")
        self._cancellations: dict[str, Cancellation] = {}  # steps with a stage that may wait

    def register(self) -> None:
        self.worker.handlers.update(
            placeviz_install=self.install,
            placeviz_step=self.step,
            placeviz_tensors=self.tensors,
            placeviz_abort=self.abort,
            placeviz_forget=self.forget,
            placeviz_clock=self.clock,
        )

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)

    # -- handlers --------------------------------------------------------------------------
    def install(self, graph: str, records: Any, start: int, seed: int | None) -> int:
        self.handled["ops"] += 1
        return self.runtime.install(graph, records, start, seed)

    def tensors(self, step: str, sender: str, values: Any, tokens: list[str]) -> None:
        self.handled["tensors"] += 1
        self.mailbox.put(step, sender, tensors_of(values), tokens)

    def clock(self) -> int:
        """This task's clock, which its events are stamped with (the master learns its offset)."""
        return time.perf_counter_ns()

    def forget(self, graph: str) -> str:
        """A client session closed: its graph and programs go (the variables stay)."""
        self.runtime.forget(graph)
        for program in [p for p in self.programs if p.startswith(f"{graph}-")]:
            del self.programs[program]
        return "OK"

    def abort(self, step: str) -> str:
        """The master ended the step: stop waiting for other tasks, and wake a kernel of it
        that waits for another run (with CancelledError)."""
        self.mailbox.abort(step)
        cancel = self._cancellations.get(step)
        if cancel is not None:
            cancel.cancel()
        return "OK"

    async def step(
        self,
        graph: str,
        program: str,
        step: str,
        feeds: Any,
        full_trace: bool,
        stages: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Run this task's share of a step; ``stages`` comes with a program's first step."""
        self.handled["step"] += 1
        if stages is not None:
            self.handled["program"] += 1
            self.programs[program] = stages
        known = self.programs.get(program)
        if known is None or not self.runtime.knows(graph):
            self.mailbox.abort(step)
            return {"status": "unknown"}  # a new process at the task's address: ship again
        values = tensors_of(feeds)  # every tensor the step has here, by name
        returned: dict[str, Any] = {}
        events: list[EventBatch] = []
        waits: list[list[Any]] = []  # [first op of the stage, waited from, until]
        sends: list[asyncio.Task[list[Any]]] = []
        status, failed = "OK", None
        woken: list[str] = []  # the tasks the last stage that ran sent messages to
        try:
            for stage in known:
                missing = [*(n for n in stage["receives"] if n not in values), *stage["waits"]]
                if missing:
                    began = time.perf_counter_ns()
                    values.update(await self.mailbox.take(step, missing))
                    waits.append([stage["ops"][0], began, time.perf_counter_ns()])
                values.update(stage["constants"])
                names = [*stage["feeds"], *stage["inputs"], *stage["receives"], *stage["constants"]]
                run = (
                    graph,
                    tuple(stage["ops"]),
                    names,
                    stage["fetches"],
                    stage["targets"],
                    full_trace,
                    [values[name] for name in names],
                )
                if self.runtime.may_wait(graph, run[1]):
                    loop = asyncio.get_running_loop()
                    cancel = self._cancellations.setdefault(step, Cancellation())
                    waiting = functools.partial(self._run_cancellable, cancel, run)
                    made, ran = await loop.run_in_executor(self._threads, waiting)
                else:
                    made, ran = self.runtime.run(*run)
                values.update(made)
                events.append(ran)
                for name in stage["returns"]:
                    returned[name] = made[name]
                woken = destinations(stage)
                for address in woken:
                    sent = {n: made[n] for n in stage["sends"].get(address, ())}
                    tokens = stage["signals"].get(address, [])
                    sends.append(asyncio.ensure_future(self._send(address, step, sent, tokens)))
                if sends:
                    await asyncio.sleep(0)  # the sends begin before the next stage runs
        except StepAborted:
            status = "aborted"
        except StageFailed as stage_failed:
            events.append(stage_failed.events)
            status, failed = "error", portable(stage_failed.error)
        except Exception as error:
            status, failed = "error", portable(error)
        finally:
            received = self.mailbox.finish(step)
            self._cancellations.pop(step, None)
        if woken:
            # Linux may have queued the tasks the last stage's messages woke on this core: let
            # them go on with the step before this task builds its report (MLP step in one
            # cluster, blocks of 100 steps with and without: 4 + 4 7.90 -> 7.44 ms, faster in
            # 16 of 20; 2 + 2 unchanged, 28 of 50)
            os.sched_yield()
        if status == "OK":
            outcomes = await asyncio.gather(*sends, return_exceptions=True)
            lost = next((o for o in outcomes if isinstance(o, Exception)), None)
            if lost is not None:  # a tensor that did not leave: the step fails here
                status, failed = "error", portable(lost)
        else:  # ended early: what had been sent by then, not waiting for the rest
            ended = [t for t in sends if t.done() and not t.cancelled()]
            outcomes = [t.result() for t in ended if t.exception() is None]
        # Whatever the outcome, the report: the client's trace keeps what ran before a failure.
        report = {
            "status": status,
            "values": as_frames(returned if status == "OK" else {}),
            "events": pickled(array_parts(reported(events))),
            "devices": self.runtime.device_names(graph),
            "sent": [o for o in outcomes if not isinstance(o, BaseException)],
            "received": received,
            "waits": waits,
        }
        if failed is not None:
            report["error"] = pickled(failed)  # no chain back to this process's frames
        return report

    def _run_cancellable(self, cancel: Cancellation, run: tuple[Any, ...]) -> Any:
        with cancel:
            return self.runtime.run(*run)

    async def _send(
        self, address: str, step: str, values: dict[str, Any], tokens: list[str]
    ) -> list[Any]:
        """Send tensors (and tokens) to the task at ``address``; [to, names, bytes, when the
        send began, when its bytes were written]."""
        began = time.perf_counter_ns()
        await self.worker.rpc(address).placeviz_tensors(
            step=step,
            sender=self.worker.name,
            values=as_frames(values),
            tokens=tokens,
            reply=False,  # the receiving stage needs them, not this one an answer
        )
        sizes = [int(getattr(value, "nbytes", 0)) for value in values.values()]
        return [address, list(values), sizes, began, time.perf_counter_ns()]


def handled(dask_worker: Any) -> dict[str, int]:
    """The messages this task's worker handled, by kind (``client.run`` passes the worker)."""
    server: StepServer = dask_worker.handlers["placeviz_step"].__self__
    return dict(server.handled)


def held(dask_worker: Any) -> tuple[int, int]:
    """How many client graphs and run programs this task holds (``client.run`` passes it)."""
    server: StepServer = dask_worker.handlers["placeviz_step"].__self__
    return server.runtime.graphs_held(), len(server.programs)
