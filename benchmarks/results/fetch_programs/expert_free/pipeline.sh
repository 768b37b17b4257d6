#!/bin/bash
# The learned preset's later stages for one goal-policy stage (issue 36), from the repository root:
#   bash benchmarks/results/fetch_programs/expert_free/pipeline.sh k
# waits for runs/ef-gp-STAGE/result.json (its goal-policy run), copies the run here as goal-policy-STAGE/, then
# runs its atomic evaluation and end-state counts beside the behaviour model's collection, the meta-controller
# and Table 2's three modes side by side, each copied here as <stage>-STAGE/. Stages i and j ran it (as
# runs/ef_i_pipeline.sh and runs/ef_j_pipeline.sh; i's run had no move_end step, measured after it).
# With SNAPSHOT, the stage's policy.npz is that policy file (a snapshot, runs/ef-gp-STAGE/snapshots/policy_eNNNN.npz,
# or a weight average, as chosen by benchmarks/fetch_select_snapshot.py), and the run's last policy is kept as
# policy_last.npz. A policy with no run of its own (a model soup of committed stages, fetch_select_snapshot.py --soup)
# goes the same way with no runs/ef-gp-STAGE: goal-policy-STAGE/ then holds the policy file alone.
set -ex
S=${1:?usage: pipeline.sh STAGE [SNAPSHOT] (the letter of goal-policy-STAGE; a policy file chosen for it)}
SNAPSHOT=${2:-}
cd "$(dirname "$0")/../../../.."
EF=benchmarks/results/fetch_programs/expert_free
mkdir -p $EF/goal-policy-$S
if [ -n "$SNAPSHOT" ] && [ ! -d runs/ef-gp-$S ]; then
  cp "$SNAPSHOT" $EF/goal-policy-$S/policy.npz
else
  while [ ! -f runs/ef-gp-$S/result.json ]; do sleep 20; done
  cp runs/ef-gp-$S/{carry.npz,policy.npz,config.json,metrics.csv,curves.png,checkpoint.json,result.json} $EF/goal-policy-$S/
  cp runs/ef-gp-$S.log $EF/goal-policy-$S/train.log
fi
if [ -n "$SNAPSHOT" ] && [ -f $EF/goal-policy-$S/carry.npz ]; then
  mv $EF/goal-policy-$S/policy.npz $EF/goal-policy-$S/policy_last.npz
  cp "$SNAPSHOT" $EF/goal-policy-$S/policy.npz
fi
P=$EF/goal-policy-$S/policy.npz
(asg eval --domain fetch-programs --suite atomic --starts table --policy $P --episodes 100 --z-tolerance 0.02 --json > runs/ef-$S-atomic.json
 python benchmarks/fetch_stack_end.py --policy $P --episodes 20 --out $EF/goal-policy-$S/stack_end_20.json
 python benchmarks/fetch_stack_end.py --policy $P --family Move_To_Zone --starts table,chained --episodes 20 --out $EF/goal-policy-$S/move_end_20.json
) > runs/ef-$S-eval.log 2>&1 &
asg train --domain fetch-programs --stage behaviour-model --preset learned --episodes 10000 --config benchmarks/results/fetch_programs/paper_pipeline/epochs-30/threads2.json --policy $P --out runs/ef-bm-$S --seed 0 --quiet > runs/ef-bm-$S.log 2>&1
wait
mkdir -p $EF/behaviour-model-$S
cp runs/ef-bm-$S/{behaviour_model.npz,config.json,curves.png,metrics.csv,result.json} $EF/behaviour-model-$S/
cp runs/ef-bm-$S.log $EF/behaviour-model-$S/train.log
BM=$EF/behaviour-model-$S/behaviour_model.npz
asg train --domain fetch-programs --stage meta-controller --preset learned --world-model learned --behaviour-model $BM --iterations 200 --workers 1 --seed 0 --out runs/ef-mc-$S --quiet > runs/ef-mc-$S.log 2>&1
mkdir -p $EF/meta-controller-$S
cp runs/ef-mc-$S/{config.json,meta_controller.npz,metrics.csv,result.json} $EF/meta-controller-$S/
cp runs/ef-mc-$S.log $EF/meta-controller-$S/train.log
for m in replan plan network; do
  asg eval --domain fetch-programs --suite non-atomic --mode $m --policy $P --checkpoint $EF/meta-controller-$S --world-model learned --behaviour-model $BM --episodes 100 --out runs/t2$S-$m > runs/t2$S-$m.log 2>&1 &
done
wait
mkdir -p $EF/table2-$S
cp runs/t2$S-*/non-atomic-*.json runs/t2$S-*/non-atomic-*.png $EF/table2-$S/
echo "done: stamp the atomic JSON (runs/ef-$S-atomic.json) and the Table 2 JSONs with benchmarks/provenance.py"
