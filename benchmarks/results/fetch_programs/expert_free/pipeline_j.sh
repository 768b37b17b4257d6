#!/bin/bash
# goal-policy-j -> behaviour model -> meta-controller -> Table 2 (issue 36)
set -x
cd /work/main
EF=benchmarks/results/fetch_programs/expert_free
while [ ! -f runs/ef-gp-j/result.json ]; do sleep 20; done
sleep 5
mkdir -p $EF/goal-policy-j
cp runs/ef-gp-j/{carry.npz,policy.npz,config.json,metrics.csv,curves.png,checkpoint.json,result.json} $EF/goal-policy-j/ 2>/dev/null
cp runs/ef-gp-j.log $EF/goal-policy-j/train.log
P=$EF/goal-policy-j/policy.npz
date
(asg eval --domain fetch-programs --suite atomic --starts table --policy $P --episodes 100 --z-tolerance 0.02 --json > $EF/goal-policy-j/atomic_eval_100.json.tmp && mv $EF/goal-policy-j/atomic_eval_100.json.tmp $EF/goal-policy-j/atomic_eval_100.json; \
 python benchmarks/fetch_stack_end.py --policy $P --episodes 20 --out $EF/goal-policy-j/stack_end_20.json; \
 python benchmarks/fetch_stack_end.py --policy $P --family Move_To_Zone --starts table,chained --episodes 20 --out $EF/goal-policy-j/move_end_20.json) > runs/ef-j-eval.log 2>&1 &
asg train --domain fetch-programs --stage behaviour-model --preset learned --episodes 10000 --config benchmarks/results/fetch_programs/paper_pipeline/epochs-30/threads2.json --policy $P --out runs/ef-bm-j --seed 0 --quiet > runs/ef-bm-j.log 2>&1
wait
date
mkdir -p $EF/behaviour-model-j
cp runs/ef-bm-j/{behaviour_model.npz,config.json,curves.png,metrics.csv,result.json} $EF/behaviour-model-j/
cp runs/ef-bm-j.log $EF/behaviour-model-j/train.log
BM=$EF/behaviour-model-j/behaviour_model.npz
asg train --domain fetch-programs --stage meta-controller --preset learned --world-model learned --behaviour-model $BM --iterations 200 --workers 1 --seed 0 --out runs/ef-mc-j --quiet > runs/ef-mc-j.log 2>&1
date
mkdir -p $EF/meta-controller-j
cp runs/ef-mc-j/{config.json,meta_controller.npz,metrics.csv,result.json} $EF/meta-controller-j/
cp runs/ef-mc-j.log $EF/meta-controller-j/train.log
for m in replan plan network; do
  asg eval --domain fetch-programs --suite non-atomic --mode $m --policy $P --checkpoint $EF/meta-controller-j --world-model learned --behaviour-model $BM --episodes 100 --out runs/t2j-$m > runs/t2j-$m.log 2>&1 &
done
wait
date
mkdir -p $EF/table2-j
cp runs/t2j-*/non-atomic-*.json runs/t2j-*/non-atomic-*.png $EF/table2-j/ 2>/dev/null
echo PIPELINE DONE
