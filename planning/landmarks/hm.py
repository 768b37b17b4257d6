"""h^m landmarks on the AND/OR graph of Π^m (Keyder, Richter & Helmert, ECAI 2010).

For m = 1 the nodes are facts; for m = 2 they are facts and pairs of facts ("m-sets"), and
each operator ``a`` gains, for every fact ``c`` it leaves untouched, a conditional no-op
``a_c`` that carries ``c`` alongside a's effects (Haslum's Π^m compilation).

Each reached m-set E carries a label LM(E), the m-sets that every relaxed derivation of E
passes through. Labels start at the label of E's first achiever and only shrink:

    L(a)  = ∪_{P ∈ pre(a)} ({P} ∪ LM(P))
    LM(E) = ∩_{a achieves E} L(a)          (E in s0: LM(E) = ∅)

iterated to the greatest fixpoint. Labels are Python ints used as bitsets over m-set ids,
so union and intersection run in C. Orderings: ``P ∈ LM(E)`` gives a natural ordering
P → E; the pre-m-sets shared by all first achievers of E (achievers with E ∉ L(a)) give
greedy-necessary orderings.
"""
from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass
from itertools import combinations

from asg.planning.errors import AsgError
from asg.planning.task import Atom, Task


@dataclass(frozen=True)
class HmResult:
    """The raw fixpoint: m-sets (tuples of fact ids), their labels and gn parents."""

    facts: tuple[Atom, ...]
    msets: tuple[tuple[int, ...], ...]  # id -> sorted fact ids
    labels: dict[int, int]  # id -> bitset of ids (reached m-sets only)
    greedy_necessary: dict[int, int]  # id -> bitset of ids shared by its first achievers
    goal_msets: tuple[int, ...]
    init_msets: frozenset[int]

    def members(self, bits: int) -> list[int]:
        """Ids set in a bitset, ascending."""
        out, i = [], 0
        while bits:
            low = bits & -bits
            i = low.bit_length() - 1
            out.append(i)
            bits ^= low
        return out


class _MSets:
    """Ids for m-sets: fact f has id f; pairs get the next free id when first needed."""

    def __init__(self, n_facts: int) -> None:
        self.sets: list[tuple[int, ...]] = [(f,) for f in range(n_facts)]
        self.pair_ids: dict[tuple[int, int], int] = {}

    def pair(self, f: int, g: int) -> int:
        key = (f, g) if f < g else (g, f)
        found = self.pair_ids.get(key)
        if found is None:
            found = len(self.sets)
            self.sets.append(key)
            self.pair_ids[key] = found
        return found

    def of(self, facts: list[int], m: int) -> list[int]:
        """Ids of every m-subset (size 1..m) of ``facts``."""
        ids = list(facts)
        if m >= 2:
            ids.extend(self.pair(f, g) for f, g in combinations(facts, 2))
        return ids


def hm_landmarks(task: Task, m: int = 1) -> HmResult:
    """Compute h^m labels (m in {1, 2}) and first-achiever orderings of ``task``.

    As Fast Downward's ``lm_hm``: effect conditions are ignored (a conditional effect counts as
    unconditional, which can only lose landmarks at m = 1), and a task with axioms is refused.
    """
    if m not in (1, 2):
        raise ValueError("m must be 1 or 2")
    if task.axioms:
        raise AsgError("h^m landmarks do not support axioms (derived predicates, or the new-axiom atoms that "
                       "compile universal conditions), as Fast Downward's lm_hm: the rhw and zg factories read them")
    fact_id = {fact: i for i, fact in enumerate(task.facts)}
    if m == 1:
        return _hm1(task, fact_id)
    msets = _MSets(len(task.facts))
    ops = []
    for op in task.operators:
        pre = sorted(fact_id[a] for a in op.pre)
        add = sorted(fact_id[a] for a in op.all_add())
        delete = {fact_id[a] for a in op.all_delete()}
        post = sorted(set(add) | (set(pre) - delete))
        pre_ids = msets.of(pre, m)
        pre_set = set(pre_ids)
        effects = [e for e in msets.of(post, m) if e not in pre_set]
        touched = 0
        for f in set(add) | delete | set(pre):
            touched |= 1 << f
        ops.append((pre, add, pre_ids, effects, touched))

    init = sorted(fact_id[a] for a in task.init)
    labels: dict[int, int] = {i: 0 for i in msets.of(init, m)}
    init_msets = frozenset(labels)

    def label_of(ids: list[int]) -> int | None:
        bits = 0
        for i in ids:
            lab = labels.get(i)
            if lab is None:
                return None
            bits |= lab | (1 << i)
        return bits

    _propagate(task, m, ops, msets, labels, label_of)
    greedy = _greedy_necessary(task, ops, msets, labels, label_of, m, init_msets)
    goal = sorted(fact_id[a] for a in task.goal if a in fact_id)
    return HmResult(tuple(task.facts), tuple(msets.sets), labels, greedy,
                    tuple(msets.of(goal, m)), init_msets)


def _hm1(task: Task, fact_id: dict[Atom, int]) -> HmResult:
    """m = 1, where m-sets are facts and there are no no-ops: the same fixpoint as the general
    path (labels only shrink from ⊤, so the order of evaluation does not change it), computed
    by relaxed exploration. An operator is first evaluated once all its preconditions are
    reached, in breadth-first order, so most labels are final when first set; a shrinking
    label re-queues the operators that need that fact."""
    n_ops = len(task.operators)
    pres: list[list[int]] = []
    effects: list[list[int]] = []
    needs: list[list[int]] = [[] for _ in task.facts]  # fact -> operators with it in pre
    missing = [0] * n_ops  # preconditions not reached yet
    get = fact_id.__getitem__
    for k, op in enumerate(task.operators):
        pre = sorted(set(map(get, op.pre)))
        pres.append(pre)
        effects.append(sorted(set(map(get, op.all_add())).difference(pre)))
        missing[k] = len(pre)
        for f in pre:
            needs[f].append(k)
    labels: list[int | None] = [None] * len(task.facts)
    init = sorted(set(map(get, task.init)))
    queue: deque[int] = deque(k for k in range(n_ops) if not missing[k])
    for f in init:
        labels[f] = 0
        for k in needs[f]:
            missing[k] -= 1
            if not missing[k]:
                queue.append(k)
    queued = bytearray(n_ops)
    for k in queue:
        queued[k] = 1
    op_label: list[int | None] = [None] * n_ops
    while queue:
        k = queue.popleft()
        queued[k] = 0
        label = 0
        for f in pres[k]:
            pre_label = labels[f]
            assert pre_label is not None  # k is queued only once every precondition is reached
            label |= pre_label | (1 << f)
        if label == op_label[k]:
            continue
        op_label[k] = label
        for e in effects[k]:
            old = labels[e]
            if old is None:  # first reached: its operators may become ready
                labels[e] = label
                for j in needs[e]:
                    missing[j] -= 1
                    if not missing[j] and not queued[j]:
                        queued[j] = 1
                        queue.append(j)
                continue
            new = old & label
            if new != old:
                labels[e] = new
                for j in needs[e]:
                    if not missing[j] and not queued[j]:
                        queued[j] = 1
                        queue.append(j)
    init_set = frozenset(init)
    shared: dict[int, int] = {}  # first achievers' common preconditions (final labels)
    for k, final_label in enumerate(op_label):
        if final_label is None:
            continue
        pre_bits = 0
        for f in pres[k]:
            pre_bits |= 1 << f
        for e in effects[k]:
            if (final_label >> e) & 1 or (labels[e] == 0 and e in init_set):
                continue  # not a first achiever, or true from the start (nothing ordered before it)
            shared[e] = shared.get(e, pre_bits) & pre_bits
    reached = {f: lab for f, lab in enumerate(labels) if lab is not None}
    goal = sorted(fact_id[a] for a in task.goal if a in fact_id)
    return HmResult(tuple(task.facts), tuple((f,) for f in range(len(task.facts))), reached, shared,
                    tuple(goal), init_set)


def _propagate(task: Task, m: int, ops: list, msets: _MSets, labels: dict[int, int], label_of) -> None:
    """Shrink labels to the fixpoint, re-evaluating only what a change can affect.

    Work items are operators and (for m = 2) conditional no-ops (a, c). When an m-set is
    reached or its label shrinks, the operators with it in their precondition are queued;
    a pair {c, x} also queues the no-ops of c for operators needing x (and vice versa).
    """
    n_facts = len(task.facts)
    by_pre_mset: dict[int, list[int]] = defaultdict(list)
    by_pre_fact: dict[int, list[int]] = defaultdict(list)
    for k, (pre, _, pre_ids, _, _) in enumerate(ops):
        for i in pre_ids:
            by_pre_mset[i].append(k)
        for f in pre:
            by_pre_fact[f].append(k)
    op_label: list[int | None] = [None] * len(ops)
    partners = [0] * n_facts  # partners[x]: facts c with {c, x} reached
    reached_facts = 0
    queue: deque = deque()
    queued: set = set()

    def push(item) -> None:
        if item not in queued:
            queued.add(item)
            queue.append(item)

    def noop_candidates(k: int) -> int:
        pre, add, _, _, touched = ops[k]
        bits = reached_facts & ~touched
        for x in pre:
            bits &= partners[x]
        return bits

    def changed(i: int, new: bool) -> None:
        nonlocal reached_facts
        for k in by_pre_mset.get(i, ()):
            push(k)
        if m < 2:
            return
        members = msets.sets[i]
        if len(members) == 1:
            if not new:
                return  # a no-op's condition is its mixed pairs: of {c} only its reaching matters
            c = members[0]
            reached_facts |= 1 << c
            for k, (pre, add, _, _, touched) in enumerate(ops):
                if op_label[k] is not None and add and not (touched >> c) & 1 \
                        and all((partners[x] >> c) & 1 for x in pre):
                    push((k, c))
        else:  # a reached or shrunk pair {c, x} feeds the no-ops (a, c) with x in pre(a)
            c, x = members
            partners[c] |= 1 << x
            partners[x] |= 1 << c
            for f, g in ((c, x), (x, c)):
                for k in by_pre_fact.get(g, ()):
                    if op_label[k] is not None and ops[k][1] and not (ops[k][4] >> f) & 1:
                        push((k, f))

    def update(effect: int, bits: int) -> None:
        old = labels.get(effect)
        new = bits if old is None else old & bits
        if new != old:
            labels[effect] = new
            changed(effect, old is None)

    for i in list(labels):
        changed(i, True)
    for k in range(len(ops)):
        push(k)
    while queue:
        item = queue.popleft()
        queued.discard(item)
        if isinstance(item, int):
            pre, add, pre_ids, effects, touched = ops[item]
            label = label_of(pre_ids)
            if label is None or label == op_label[item]:
                continue
            op_label[item] = label
            for effect in effects:
                update(effect, label)
            if m == 2 and add:
                bits = noop_candidates(item)
                while bits:
                    low = bits & -bits
                    push((item, low.bit_length() - 1))
                    bits ^= low
        else:
            k, c = item
            base = op_label[k]
            pre, add = ops[k][0], ops[k][1]
            cond = _noop_condition(c, pre, msets, labels, label_of)
            if base is None or cond is None:
                continue
            bits = base | cond
            for e in add:
                update(msets.pair(c, e), bits)


def _noop_condition(c: int, pre: list[int], msets: _MSets, labels: dict[int, int], label_of) -> int | None:
    """Label of the no-op a_c's condition: the mixed pairs {c, x}, x in pre(a).

    As in FD, {c} itself is not part of the condition (it holds already and a leaves it
    alone); it must be reached, though, for c to be carried along at all.
    """
    if c not in labels:
        return None
    return label_of([msets.pair(c, x) for x in pre])


def _greedy_necessary(task, ops, msets, labels, label_of, m, init_msets) -> dict[int, int]:
    """For each m-set: the pre-m-sets common to all its first achievers (final labels)."""
    shared: dict[int, int] = {}

    def meet(effect: int, pre_bits: int) -> None:
        if labels.get(effect) == 0 and effect in init_msets:
            return  # true from the start: no achiever is needed, so nothing is ordered before it
        shared[effect] = shared.get(effect, pre_bits) & pre_bits

    for pre, add, pre_ids, effects, touched in ops:
        op_label = label_of(pre_ids)
        if op_label is None:
            continue
        pre_bits = 0
        for i in pre_ids:
            pre_bits |= 1 << i
        for effect in effects:
            if not (op_label >> effect) & 1:
                meet(effect, pre_bits)
        if m == 2 and add:
            for c in range(len(task.facts)):
                if (touched >> c) & 1 or c not in labels:
                    continue
                noop_label = _noop_condition(c, pre, msets, labels, label_of)
                if noop_label is None:
                    continue
                noop_label |= op_label
                noop_pre = pre_bits
                for x in pre:
                    noop_pre |= 1 << msets.pair(c, x)
                for e in add:
                    effect = msets.pair(c, e)
                    if not (noop_label >> effect) & 1:
                        meet(effect, noop_pre)
    return shared


def relaxed_reachable(task: Task) -> frozenset[Atom]:
    """Facts reachable when delete effects are ignored (h^max < ∞), in time linear in the task.

    A conditional effect adds once its operator's precondition and its own condition are
    reached; an axiom derives its head once its body is (both as relaxed rules). The negation
    of a derived atom counts as reached from the start: whether no rule fires is not a relaxed
    question, and assuming it can keeps this an over-approximation."""
    rules: list[tuple[frozenset[Atom], frozenset[Atom]]] = []  # (needs, adds)
    for op in task.operators:
        rules.append((op.pre, op.add))
        rules.extend((op.pre | effect.condition, effect.add) for effect in op.conditional)
    rules.extend((axiom.body, frozenset((axiom.head,))) for axiom in task.axioms)
    waiting: dict[Atom, list[int]] = defaultdict(list)
    missing = []
    for k, (needs, _) in enumerate(rules):
        missing.append(len(needs))
        for atom in needs:
            waiting[atom].append(k)
    reached = set(task.init) | {d.negate() for d in task.derived}
    queue = deque(reached)
    queue.extend(a for needs, adds in rules if not needs for a in adds)
    while queue:
        atom = queue.popleft()
        if atom not in reached:
            reached.add(atom)
        for k in waiting.pop(atom, ()):
            missing[k] -= 1
            if missing[k] == 0:
                queue.extend(a for a in rules[k][1] if a not in reached)
    return frozenset(reached)
