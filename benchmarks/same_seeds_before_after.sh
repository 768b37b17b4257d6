#!/usr/bin/env bash
# The same seeds before and after a refactor: ASGRL runs (3 seeds x Mario, Household-V1, MineCraft)
# and the Fetch evaluations (atomic, 20 episodes per program; Table 2 re-plan, 20 per program), run
# by the installed asg (after) and by a git worktree of REV (before), in WORK; then compare:
#     benchmarks/same_seeds_before_after.sh REV WORK && python benchmarks/same_seeds_compare.py WORK
# Issue 15 ran it with REV 24d6b6e (results: benchmarks/results/issue15/same_seeds.md).
set -u
REV=${1:?usage: same_seeds_before_after.sh REV WORK}
WORK=${2:?usage: same_seeds_before_after.sh REV WORK}
SRC="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$WORK/old" "$WORK/new" "$WORK/pkg"
git -C "$SRC" worktree add -f "$WORK/tree" "$REV" >/dev/null
ln -sfn "$WORK/tree" "$WORK/pkg/asg"   # the old checkout as the package asg, ahead of the installed one
cd "$WORK"
asg_old() { PYTHONPATH="$WORK/pkg" python -c "import sys; from asg.cli.main import main; sys.argv[0]='asg'; main()" "$@"; }
for d in mario household-v1 minecraft; do
  for s in 0 1 2; do
    asg_old train --domain $d --seed $s --out old/$d-$s --quiet --json > old-$d-$s.json 2>/dev/null
    asg train --domain $d --seed $s --out new/$d-$s --quiet --json > new-$d-$s.json 2>/dev/null
  done
done
asg_old eval --domain fetch-programs --suite atomic --episodes 20 --json > old-atomic.json 2>/dev/null
asg eval --domain fetch-programs --suite atomic --episodes 20 --json > new-atomic.json 2>/dev/null
asg_old eval --domain fetch-programs --suite non-atomic --mode replan --episodes 20 --out old/ev --json > old-replan.json 2>/dev/null
asg eval --domain fetch-programs --suite non-atomic --mode replan --world-model exact --episodes 20 --out new/ev --json > new-replan.json 2>/dev/null
git -C "$SRC" worktree remove --force "$WORK/tree"
echo done > finished
