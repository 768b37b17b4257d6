; unlocktounlock.pddl as two rounds of `asg mvtr --suggest --write` repaired it (issues 39 and 40),
; made by `python benchmarks/own_worlds_omitted.py --worlds unlocktounlock --force` at df66571: round 1 in
; examples/unlocktounlock,
;   asg mvtr --env BabyAI-UnlockToUnlock-v0 --labeler labels:UNLOCKTOUNLOCK --model unlocktounlock.pddl \
;       --episodes 20 --max-steps 50000 --seed 0 --json --suggest --write FIXED.pddl
; and round 2 the same with --model FIXED.pddl --write FIXED_2.pddl; this file is FIXED_2 (its copy and the
; reports in benchmarks/results/own_worlds/omitted/; this comment added afterwards). Round 1 brought in
; B's key and B's door before A's key (the hand-written unlocktounlock_repaired.pddl's mechanism); round 2
; the one hand: (hands-empty) at the start, taken away by each pick-up, needed again before A's key and
; before the ball. Landmarks: (has-key-b) < (door-b-open) < (has-key-a) < (door-a-open) < (has-ball);
; needed again: (hands-empty) after (has-key-b), and after (has-key-a).
(define (domain unlocktounlock)
    (:requirements :strips)
    (:predicates (door-a-open) (door-b-open) (hands-empty) (has-ball) (has-key-a) (has-key-b))
    (:action achieve_door_b_open
        :parameters ()
        :precondition (has-key-b)
        :effect (door-b-open)
    )
     (:action achieve_has_key_b
        :parameters ()
        :precondition (and )
        :effect (and (has-key-b) (not (hands-empty)))
    )
     (:action pick-up-ball
        :parameters ()
        :precondition (and (door-a-open) (hands-empty))
        :effect (and (has-ball) (not (hands-empty)))
    )
     (:action pick-up-key-a
        :parameters ()
        :precondition (and (door-b-open) (hands-empty))
        :effect (and (has-key-a) (not (hands-empty)))
    )
     (:action restore_hands_empty
        :parameters ()
        :precondition (and )
        :effect (hands-empty)
    )
     (:action unlock-door-a
        :parameters ()
        :precondition (has-key-a)
        :effect (door-a-open)
    )
)

(define (problem unlocktounlock)
    (:domain unlocktounlock)
    (:init (hands-empty))
    (:goal (has-ball))
)
