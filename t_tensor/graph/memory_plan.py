"""Static memory planning: give every intermediate tensor of a graph an offset in one arena.

A compiled graph knows, before it runs, every tensor it will create, its size, the step that
produces it and the last step that reads it. Two tensors whose lifetimes do not overlap can share
memory, so the whole run fits in one arena much smaller than the sum of all sizes. This module
is pure Python and knows nothing about the graph IR: it works on names, sizes and step indices.

* :func:`liveness` turns a topologically ordered list of steps ``(node, inputs, outputs)`` into
  :class:`PlannedTensor` lifetimes ``[first, last]`` (graph outputs live to the end; graph inputs
  and weights are bound, not planned).
* :func:`plan_greedy_by_size` places the largest tensors first, each one in the smallest gap
  left by the already placed tensors whose lifetimes overlap it.
* :func:`plan_offset_allocator` replays the steps in order with a free list (first or best fit,
  splitting and coalescing blocks), as a run-time allocator would.
* Both return a :class:`MemoryPlan`: offsets, ``arena_bytes``, ``naive_bytes`` (every tensor its
  own slot), ``lower_bound`` (the most bytes ever live at once), ``check()`` and ``draw()``.

Every size and offset is rounded up to ``alignment`` (64 bytes by default).

>>> from t_tensor.graph.memory_plan import liveness, plan_greedy_by_size
>>> steps = [("conv", ["x", "w"], ["a"]), ("relu", ["a"], ["b"]), ("pool", ["b"], ["y"])]
>>> tensors = liveness(steps, {"a": 4096, "b": 4096, "y": 1024}, outputs=["y"], bound=["x", "w"])
>>> [(t.name, t.first, t.last) for t in tensors]
[('a', 0, 1), ('b', 1, 2), ('y', 2, 3)]
>>> plan = plan_greedy_by_size(tensors)
>>> plan.offsets
{'a': 0, 'b': 4096, 'y': 0}
>>> plan.arena_bytes, plan.naive_bytes, plan.lower_bound
(8192, 9216, 8192)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "PlannedTensor",
    "MemoryPlan",
    "liveness",
    "plan_greedy_by_size",
    "plan_offset_allocator",
    "compare_planners",
    "PlannerComparison",
    "PLANNERS",
    "align_up",
]


def align_up(nbytes: int, alignment: int = 64) -> int:
    """Round ``nbytes`` up to a multiple of ``alignment``.

    >>> align_up(1), align_up(64), align_up(65), align_up(0)
    (64, 64, 128, 0)
    """
    return -(-nbytes // alignment) * alignment


@dataclass(frozen=True)
class PlannedTensor:
    """One tensor to place: ``nbytes`` live from step ``first`` (its producer) to ``last`` (its
    last consumer), both inclusive.

    ``inplace_of`` names an input of the producing step whose memory this tensor may take over
    (an elementwise node's output): the planners give it that input's offset when the input is
    planned, dies at this very step (``input.last == first``) and its block is large enough;
    otherwise the hint is ignored.

    >>> PlannedTensor("relu_out", 4096, 1, 2, inplace_of="conv_out")
    PlannedTensor(name='relu_out', nbytes=4096, first=1, last=2, inplace_of='conv_out')
    """

    name: str
    nbytes: int
    first: int
    last: int
    inplace_of: str | None = None

    def __post_init__(self) -> None:
        if self.nbytes < 0:
            raise ValueError(f"PlannedTensor: {self.name!r} has negative size {self.nbytes}")
        if not 0 <= self.first <= self.last:
            raise ValueError(
                f"PlannedTensor: {self.name!r} needs 0 <= first <= last, got first={self.first}, last={self.last}"
            )

    def overlaps_in_time(self, other: PlannedTensor) -> bool:
        """True when both tensors are live at some common step (lifetimes are closed intervals)."""
        return self.first <= other.last and other.first <= self.last


def liveness(
    steps: Sequence[tuple[str, Sequence[str], Sequence[str]]],
    sizes: Mapping[str, int],
    outputs: Iterable[str] = (),
    bound: Iterable[str] = (),
    inplace_nodes: Iterable[str] = (),
) -> list[PlannedTensor]:
    """Lifetimes of the tensors a topologically ordered list of steps creates.

    ``steps[i] = (node_name, input_names, output_names)``. A tensor produced at step ``i`` lives
    until the last step that reads it; a graph output (in ``outputs``) lives until
    ``len(steps)``; a tensor nobody reads lives during its own step only. Names in ``bound``
    (graph inputs, weights, constants) have memory of their own and are not planned.

    For the nodes named in ``inplace_nodes`` (elementwise ones, whose output element ``k`` only
    depends on input element ``k``), each output gets ``inplace_of`` = the first of the node's
    planned inputs that dies at this step, holds at least as many bytes, and is not already
    taken by another output of the node.

    Returns the tensors in production order.

    >>> steps = [("mul", ["x", "w"], ["a"]), ("add", ["a", "x"], ["b"]), ("tanh", ["b"], ["y"])]
    >>> for t in liveness(steps, {"a": 256, "b": 256, "y": 256}, ["y"], ["x", "w"], {"add", "tanh"}):
    ...     print(t)
    PlannedTensor(name='a', nbytes=256, first=0, last=1, inplace_of=None)
    PlannedTensor(name='b', nbytes=256, first=1, last=2, inplace_of='a')
    PlannedTensor(name='y', nbytes=256, first=2, last=3, inplace_of='b')
    """
    bound_set = set(bound)
    inplace_set = set(inplace_nodes)
    producer: dict[str, int] = {}
    last_use: dict[str, int] = {}
    for i, (node, inputs, outs) in enumerate(steps):
        for name in inputs:
            if name in bound_set:
                continue
            if name not in producer:
                raise ValueError(
                    f"liveness: step {i} ({node!r}) reads {name!r}, "
                    "which no earlier step produces and which is not bound"
                )
            last_use[name] = i
        for name in outs:
            if name in producer or name in bound_set:
                raise ValueError(f"liveness: step {i} ({node!r}) produces {name!r}, which already exists")
            if name not in sizes:
                raise ValueError(f"liveness: no size given for {name!r} (produced by step {i}, {node!r})")
            producer[name] = i
    end = len(steps)
    for name in outputs:
        if name in bound_set:
            continue
        if name not in producer:
            raise ValueError(f"liveness: graph output {name!r} is neither produced by a step nor bound")
        last_use[name] = end

    def last_of(name: str) -> int:
        return last_use.get(name, producer[name])

    result: list[PlannedTensor] = []
    for i, (node, inputs, outs) in enumerate(steps):
        taken: set[str] = set()
        for name in outs:
            inplace_of = None
            if node in inplace_set:
                for candidate in inputs:
                    if (
                        candidate in producer
                        and candidate not in taken
                        and last_of(candidate) == i
                        and sizes[candidate] >= sizes[name]
                    ):
                        inplace_of = candidate
                        taken.add(candidate)
                        break
            result.append(PlannedTensor(name, int(sizes[name]), i, last_of(name), inplace_of))
    return result


@dataclass
class _Buffer:
    """Tensors that share one block: a root and the chain of tensors computed in place over it."""

    index: int  # position of the root in the input list (deterministic tie-breaking)
    members: list[PlannedTensor]
    size: int  # aligned size of the block
    first: int
    last: int
    offset: int = 0

    def overlaps_in_time(self, other: _Buffer) -> bool:
        return self.first <= other.last and other.first <= self.last


def _validate(tensors: Sequence[PlannedTensor], alignment: int, where: str) -> None:
    if not isinstance(alignment, int) or alignment <= 0:
        raise ValueError(f"{where}: alignment must be a positive integer, got {alignment!r}")
    seen: set[str] = set()
    for t in tensors:
        if not isinstance(t, PlannedTensor):
            raise TypeError(f"{where}: expected PlannedTensor objects, got {type(t).__name__}")
        if t.name in seen:
            raise ValueError(f"{where}: tensor {t.name!r} appears twice")
        seen.add(t.name)


def _buffers(tensors: Sequence[PlannedTensor], alignment: int, inplace: bool) -> tuple[list[_Buffer], dict[str, str]]:
    """Group the tensors into blocks, following the usable in-place hints.

    A hint ``t.inplace_of = i`` is used when ``i`` is planned, is produced before ``t`` and dies
    at ``t``'s producing step, was not already taken over by another tensor, and ``t`` fits in the
    block of ``i``. Returns the blocks and the map {tensor: input whose memory it took}.
    """
    by_name = {t.name: t for t in tensors}
    buffer_of: dict[str, _Buffer] = {}
    taken: dict[str, str] = {}  # input -> the tensor that took its memory
    inplace_map: dict[str, str] = {}
    buffers: list[_Buffer] = []
    order = sorted(range(len(tensors)), key=lambda k: (tensors[k].first, k))
    for k in order:
        t = tensors[k]
        src = by_name.get(t.inplace_of) if (inplace and t.inplace_of is not None) else None
        if (
            src is not None
            and src.name != t.name
            and src.first < t.first == src.last
            and src.name not in taken
            and t.nbytes <= buffer_of[src.name].members[0].nbytes
        ):
            buf = buffer_of[src.name]
            buf.members.append(t)
            buf.last = max(buf.last, t.last)
            taken[src.name] = t.name
            inplace_map[t.name] = src.name
        else:
            buf = _Buffer(k, [t], align_up(t.nbytes, alignment), t.first, t.last)
            buffers.append(buf)
        buffer_of[t.name] = buf
    return buffers, inplace_map


def _lower_bound(tensors: Sequence[PlannedTensor], alignment: int) -> int:
    """The largest total (aligned) size of tensors live at one step."""
    events = []
    for t in tensors:
        size = align_up(t.nbytes, alignment)
        events.append((t.first, size))
        events.append((t.last + 1, -size))
    events.sort()  # at one position the frees (negative) come before the allocations
    live = best = 0
    for _, delta in events:
        live += delta
        best = max(best, live)
    return best


def _format_table(rows: Sequence[Sequence[str]], right: set[int]) -> str:
    """Rows of cells as aligned text columns; the columns in ``right`` are right-aligned."""
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell.rjust(widths[c]) if c in right else cell.ljust(widths[c]) for c, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


@dataclass
class MemoryPlan:
    """Offsets of every planned tensor in one arena, with the numbers to judge the plan by.

    * ``arena_bytes``: the arena to allocate (the highest end of a tensor, aligned);
    * ``naive_bytes``: the sum of all (aligned) sizes, what one block per tensor would need;
    * ``lower_bound``: the largest total (aligned) size of tensors live at the same step. Without
      in-place reuse no plan can use less; in-place reuse can go below it;
    * ``inplace``: {tensor: input whose memory it took}, ``inplace_bytes``: the bytes this saved.

    >>> plan = plan_greedy_by_size([PlannedTensor("a", 100, 0, 1), PlannedTensor("b", 64, 1, 2)])
    >>> plan.offsets, plan.arena_bytes, plan.lower_bound
    ({'a': 0, 'b': 128}, 192, 192)
    >>> plan.check()
    """

    planner: str
    tensors: list[PlannedTensor]
    offsets: dict[str, int]
    alignment: int
    arena_bytes: int
    naive_bytes: int
    lower_bound: int
    inplace: dict[str, str] = field(default_factory=dict)

    @property
    def inplace_bytes(self) -> int:
        """Bytes saved by in-place reuse: the aligned sizes of the tensors that took an input's block."""
        by_name = {t.name: t for t in self.tensors}
        return sum(align_up(by_name[name].nbytes, self.alignment) for name in self.inplace)

    @property
    def num_steps(self) -> int:
        """One past the last step any tensor is live at (the number of steps when outputs exist)."""
        return max((t.last for t in self.tensors), default=-1) + 1

    def check(self) -> None:
        """Raise ValueError unless the plan is valid: every offset aligned, every tensor inside the
        arena, and no two tensors live at a common step overlapping in memory, except a tensor and
        the input it was computed in place over (same offset, the input dying at that step).
        """
        for t in self.tensors:
            if t.name not in self.offsets:
                raise ValueError(f"MemoryPlan.check: {t.name!r} has no offset")
            off = self.offsets[t.name]
            if off < 0 or off % self.alignment:
                raise ValueError(f"MemoryPlan.check: {t.name!r} has offset {off}, not a multiple of {self.alignment}")
            if off + t.nbytes > self.arena_bytes:
                raise ValueError(
                    f"MemoryPlan.check: {t.name!r} ends at {off + t.nbytes}, past the arena ({self.arena_bytes} bytes)"
                )
        ts = sorted(self.tensors, key=lambda t: t.first)
        for i, a in enumerate(ts):
            a0 = self.offsets[a.name]
            for b in ts[i + 1 :]:
                if b.first > a.last:
                    break
                b0 = self.offsets[b.name]
                if a.nbytes == 0 or b.nbytes == 0 or a0 + a.nbytes <= b0 or b0 + b.nbytes <= a0:
                    continue
                if self._inplace_pair(a, b) or self._inplace_pair(b, a):
                    continue
                raise ValueError(
                    f"MemoryPlan.check: {a.name!r} [{a0}, {a0 + a.nbytes}) and {b.name!r} [{b0}, {b0 + b.nbytes}) "
                    f"overlap in memory and are both live at step {max(a.first, b.first)}"
                )

    def _inplace_pair(self, out: PlannedTensor, src: PlannedTensor) -> bool:
        return (
            self.inplace.get(out.name) == src.name
            and self.offsets[out.name] == self.offsets[src.name]
            and src.first < out.first == src.last
        )

    def table(self) -> str:
        """The plan as a text table, one row per tensor in offset order."""
        rows = [("tensor", "bytes", "offset", "end", "live", "in place of")]
        for t in sorted(self.tensors, key=lambda t: (self.offsets[t.name], t.first, t.name)):
            off = self.offsets[t.name]
            src = self.inplace.get(t.name, "")
            rows.append((t.name, str(t.nbytes), str(off), str(off + t.nbytes), f"{t.first}-{t.last}", src))
        return _format_table(rows, right={1, 2, 3})

    def summary(self) -> str:
        """One line: planner, arena, naive sum, lower bound and in-place savings."""
        text = (
            f"MemoryPlan({self.planner}): {len(self.tensors)} tensors, {self.num_steps} steps, "
            f"arena {self.arena_bytes} B, naive {self.naive_bytes} B, lower bound {self.lower_bound} B"
        )
        if self.inplace:
            text += f", in place saved {self.inplace_bytes} B"
        return text

    def __str__(self) -> str:
        return self.summary() + "\n" + self.table()

    def draw(self, ax: Any = None) -> Any:
        """Draw the plan with matplotlib: one rectangle per tensor, from its first to its last step
        (x) and over its bytes in the arena (y), with the lower bound and the arena size as lines.
        Tensors computed in place are hatched. Returns the axes.
        """
        from matplotlib.patches import Rectangle

        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(8, 4.5))
        colors = [f"C{i}" for i in range(10)]
        for k, t in enumerate(self.tensors):
            off = self.offsets[t.name]
            width = max(t.last - t.first, 0.3)
            ax.add_patch(
                Rectangle(
                    (t.first, off),
                    width,
                    t.nbytes,
                    facecolor=colors[k % len(colors)],
                    edgecolor="black",
                    alpha=0.6,
                    hatch="//" if t.name in self.inplace else None,
                )
            )
            ax.text(t.first + width / 2, off + t.nbytes / 2, t.name, ha="center", va="center", fontsize=8, clip_on=True)
        ax.axhline(self.lower_bound, color="gray", linestyle="--", label=f"lower bound {self.lower_bound} B")
        ax.axhline(self.arena_bytes, color="black", label=f"arena {self.arena_bytes} B")
        ax.set_xlim(-0.5, max(self.num_steps, 1) + 0.5)
        ax.set_ylim(0, max(self.arena_bytes, self.lower_bound, 1) * 1.08)
        ax.set_xlabel("step")
        ax.set_ylabel("offset (bytes)")
        ax.set_title(f"{self.planner}: arena {self.arena_bytes} B, naive {self.naive_bytes} B")
        ax.legend(loc="upper right", fontsize=8)
        return ax


def _make_plan(
    planner: str, tensors: Sequence[PlannedTensor], buffers: list[_Buffer], inplace_map: dict[str, str], alignment: int
) -> MemoryPlan:
    offsets = {}
    for buf in buffers:
        for t in buf.members:
            offsets[t.name] = buf.offset
    ends = [buf.offset + buf.size for buf in buffers]
    return MemoryPlan(
        planner=planner,
        tensors=list(tensors),
        offsets={t.name: offsets[t.name] for t in tensors},
        alignment=alignment,
        arena_bytes=max(ends, default=0),
        naive_bytes=sum(align_up(t.nbytes, alignment) for t in tensors),
        lower_bound=_lower_bound(tensors, alignment),
        inplace=inplace_map,
    )


def plan_greedy_by_size(tensors: Sequence[PlannedTensor], alignment: int = 64, inplace: bool = True) -> MemoryPlan:
    """Place the blocks largest first; each goes into the smallest gap, among the already placed
    blocks whose lifetimes overlap its own, that holds it (the lowest such gap on ties), or above
    them all when no gap does.

    With ``inplace`` a tensor whose ``inplace_of`` input dies at its producing step shares that
    input's block (the two form one block living over both lifetimes).

    >>> ts = [PlannedTensor("a", 64, 0, 1), PlannedTensor("b", 256, 1, 2), PlannedTensor("c", 64, 2, 3)]
    >>> plan_greedy_by_size(ts).offsets     # b first at 0; a and c above it, sharing one slot
    {'a': 256, 'b': 0, 'c': 256}
    """
    _validate(tensors, alignment, "plan_greedy_by_size")
    buffers, inplace_map = _buffers(tensors, alignment, inplace)
    placed: list[_Buffer] = []
    for buf in sorted(buffers, key=lambda b: (-b.size, b.first, b.index)):
        if buf.size == 0:
            buf.offset = 0
            continue
        best_offset = None
        best_gap = None
        prev_end = 0
        for other in sorted((p for p in placed if p.overlaps_in_time(buf)), key=lambda p: p.offset):
            gap = other.offset - prev_end
            if gap >= buf.size and (best_gap is None or gap < best_gap):
                best_gap, best_offset = gap, prev_end
            prev_end = max(prev_end, other.offset + other.size)
        buf.offset = prev_end if best_offset is None else best_offset
        placed.append(buf)
    return _make_plan("greedy_by_size", tensors, buffers, inplace_map, alignment)


def plan_offset_allocator(
    tensors: Sequence[PlannedTensor],
    alignment: int = 64,
    inplace: bool = True,
    fit: str = "best",
    coalesce: bool = True,
) -> MemoryPlan:
    """Replay the steps in order with a free list, as a run-time allocator would: at each step,
    allocate the blocks that start there (in list order), then free the blocks that die there.

    An allocation takes a free block that holds it (``fit="first"``: the lowest; ``"best"``: the
    smallest, lowest on ties) and splits off the rest as a new free block; when no block fits the
    arena grows (from the free block at its top, if any). A freed block is merged with free
    neighbours (``coalesce=False`` turns that off, to see what it is worth).

    >>> ts = [PlannedTensor("a", 64, 0, 1), PlannedTensor("b", 64, 0, 1), PlannedTensor("c", 128, 2, 3)]
    >>> plan_offset_allocator(ts).offsets            # a and b are freed and merged: c fits in their place
    {'a': 0, 'b': 64, 'c': 0}
    >>> plan_offset_allocator(ts, coalesce=False).offsets
    {'a': 0, 'b': 64, 'c': 128}
    """
    where = "plan_offset_allocator"
    _validate(tensors, alignment, where)
    if fit not in ("first", "best"):
        raise ValueError(f"{where}: fit must be 'first' or 'best', got {fit!r}")
    buffers, inplace_map = _buffers(tensors, alignment, inplace)
    starts: dict[int, list[_Buffer]] = {}
    ends: dict[int, list[_Buffer]] = {}
    for buf in sorted(buffers, key=lambda b: b.index):
        starts.setdefault(buf.first, []).append(buf)
        ends.setdefault(buf.last, []).append(buf)
    free: list[list[int]] = []  # [offset, size] blocks, sorted by offset
    top = 0  # the arena's high-water mark
    for step in sorted(set(starts) | set(ends)):
        for buf in starts.get(step, []):
            if buf.size == 0:
                continue
            choice = None
            for k, (_, size) in enumerate(free):
                if size >= buf.size and (choice is None or (fit == "best" and size < free[choice][1])):
                    choice = k
                    if fit == "first":
                        break
            if choice is not None:
                off, size = free[choice]
                buf.offset = off
                if size == buf.size:
                    del free[choice]
                else:  # split: the rest stays free
                    free[choice] = [off + buf.size, size - buf.size]
            elif coalesce and free and free[-1][0] + free[-1][1] == top:  # grow the free block at the top
                buf.offset = free.pop()[0]
                top = buf.offset + buf.size
            else:
                buf.offset = top
                top += buf.size
        for buf in ends.get(step, []):
            if buf.size == 0:
                continue
            block = [buf.offset, buf.size]
            k = 0
            while k < len(free) and free[k][0] < block[0]:
                k += 1
            free.insert(k, block)
            if coalesce:
                if k + 1 < len(free) and block[0] + block[1] == free[k + 1][0]:
                    block[1] += free.pop(k + 1)[1]
                if k > 0 and free[k - 1][0] + free[k - 1][1] == block[0]:
                    free[k - 1][1] += block[1]
                    del free[k]
    name = f"offset_{fit}_fit" + ("" if coalesce else "_no_coalesce")
    return _make_plan(name, tensors, buffers, inplace_map, alignment)


PLANNERS: dict[str, Callable[..., MemoryPlan]] = {
    "greedy_by_size": plan_greedy_by_size,
    "offset_best_fit": lambda tensors, alignment=64, inplace=True: plan_offset_allocator(
        tensors, alignment, inplace, fit="best"
    ),
    "offset_first_fit": lambda tensors, alignment=64, inplace=True: plan_offset_allocator(
        tensors, alignment, inplace, fit="first"
    ),
}
"""The planners by name; each is called as ``planner(tensors, alignment, inplace)``."""


@dataclass
class PlannerComparison:
    """The result of :func:`compare_planners`: ``rows`` of dicts, printed as a table."""

    rows: list[dict[str, Any]]

    def __str__(self) -> str:
        head = ("planner", "in place", "arena", "naive", "lower bound", "arena/bound")
        lines = [head]
        for r in self.rows:
            lines.append(
                (
                    r["planner"],
                    "yes" if r["inplace"] else "no",
                    str(r["arena"]),
                    str(r["naive"]),
                    str(r["lower_bound"]),
                    f"{r['arena'] / r['lower_bound']:.3f}" if r["lower_bound"] else "-",
                )
            )
        return _format_table(lines, right={2, 3, 4, 5})


def compare_planners(tensors: Sequence[PlannedTensor], alignment: int = 64) -> PlannerComparison:
    """Run every planner of :data:`PLANNERS` on the same tensors, without in-place reuse and, when
    some tensor has an ``inplace_of`` hint, with it; every plan is checked.

    >>> ts = liveness([("mul", ["x"], ["a"]), ("relu", ["a"], ["b"]), ("exp", ["b"], ["y"])],
    ...               {"a": 1024, "b": 1024, "y": 1024}, ["y"], ["x"], {"relu", "exp"})
    >>> print(compare_planners(ts))
    planner           in place  arena  naive  lower bound  arena/bound
    greedy_by_size    no         2048   3072         2048        1.000
    offset_best_fit   no         2048   3072         2048        1.000
    offset_first_fit  no         2048   3072         2048        1.000
    greedy_by_size    yes        1024   3072         2048        0.500
    offset_best_fit   yes        1024   3072         2048        0.500
    offset_first_fit  yes        1024   3072         2048        0.500
    """
    modes = [False, True] if any(t.inplace_of is not None for t in tensors) else [False]
    rows = []
    for inplace in modes:
        for name, planner in PLANNERS.items():
            plan = planner(tensors, alignment, inplace)
            plan.check()
            rows.append(
                {
                    "planner": name,
                    "inplace": inplace,
                    "arena": plan.arena_bytes,
                    "naive": plan.naive_bytes,
                    "lower_bound": plan.lower_bound,
                    "inplace_bytes": plan.inplace_bytes,
                }
            )
    return PlannerComparison(rows)
