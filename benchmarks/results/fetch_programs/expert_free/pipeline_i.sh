#!/bin/bash
# goal-policy-i -> behaviour model -> meta-controller -> Table 2 (issue 36)
set -x
cd /work/main
EF=benchmarks/results/fetch_programs/expert_free
while [ ! -f runs/ef-gp-i/result.json ]; do sleep 20; done
sleep 5
mkdir -p $EF/goal-policy-i
cp runs/ef-gp-i/{carry.npz,policy.npz,config.json,metrics.csv,curves.png,checkpoint.json,result.json} $EF/goal-policy-i/ 2>/dev/null
cp runs/ef-gp-i.log $EF/goal-policy-i/train.log
P=$EF/goal-policy-i/policy.npz
date
(asg eval --domain fetch-programs --suite atomic --starts table --policy $P --episodes 100 --z-tolerance 0.02 --json > $EF/goal-policy-i/atomic_eval_100.json.tmp && mv $EF/goal-policy-i/atomic_eval_100.json.tmp $EF/goal-policy-i/atomic_eval_100.json; \
 python benchmarks/fetch_stack_end.py --policy $P --episodes 20 --out $EF/goal-policy-i/stack_end_20.json) > runs/ef-i-eval.log 2>&1 &
asg train --domain fetch-programs --stage behaviour-model --preset learned --episodes 10000 --config benchmarks/results/fetch_programs/paper_pipeline/epochs-30/threads2.json --policy $P --out runs/ef-bm-i --seed 0 --quiet > runs/ef-bm-i.log 2>&1
wait
date
mkdir -p $EF/behaviour-model-i
cp runs/ef-bm-i/{behaviour_model.npz,config.json,curves.png,metrics.csv,result.json} $EF/behaviour-model-i/
cp runs/ef-bm-i.log $EF/behaviour-model-i/train.log
BM=$EF/behaviour-model-i/behaviour_model.npz
asg train --domain fetch-programs --stage meta-controller --preset learned --world-model learned --behaviour-model $BM --iterations 200 --workers 1 --seed 0 --out runs/ef-mc-i --quiet > runs/ef-mc-i.log 2>&1
date
mkdir -p $EF/meta-controller-i
cp runs/ef-mc-i/{config.json,meta_controller.npz,metrics.csv,result.json} $EF/meta-controller-i/
cp runs/ef-mc-i.log $EF/meta-controller-i/train.log
for m in replan plan network; do
  asg eval --domain fetch-programs --suite non-atomic --mode $m --policy $P --checkpoint $EF/meta-controller-i --world-model learned --behaviour-model $BM --episodes 100 --out runs/t2i-$m > runs/t2i-$m.log 2>&1 &
done
wait
date
mkdir -p $EF/table2-i
cp runs/t2i-*/non-atomic-*.json runs/t2i-*/non-atomic-*.png $EF/table2-i/ 2>/dev/null
echo PIPELINE DONE
