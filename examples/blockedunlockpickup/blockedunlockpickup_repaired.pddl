; blockedunlockpickup.pddl as two rounds of `asg mvtr --suggest --write` repaired it (issues 39 and 40
; on a world of one's own), made by `python benchmarks/own_worlds_omitted.py --worlds blockedunlockpickup
; --force` at 173af26: round 1 in examples/blockedunlockpickup,
;   asg mvtr --env MiniGrid-BlockedUnlockPickup-v0 --labeler labels:BLOCKEDUNLOCKPICKUP --model blockedunlockpickup.pddl \
;       --episodes 20 --max-steps 20000 --seed 0 --json --suggest --write FIXED.pddl
; and round 2 the same with --model FIXED.pddl --write FIXED_2.pddl; this file is FIXED_2 (its copy and both
; reports in benchmarks/results/own_worlds/omitted/; this comment added afterwards). Round 1 added
; (door-clear) before unlock-door (the ball moved out of the way, with (has-ball) in the same step); round 2
; added (hands-empty) before the ball's, the key's and the box's pick-up, taken away by each pick-up and
; restored by putting down. Landmark sequence: (door-clear) < (has-key) < (door-open) < (has-box); needed
; again: (hands-empty) after (door-clear), and after (has-key).
(define (domain blockedunlockpickup)
    (:requirements :strips)
    (:predicates (door-clear) (door-open) (hands-empty) (has-ball) (has-box) (has-key))
    (:action achieve_door_clear_and_has_ball
        :parameters ()
        :precondition (hands-empty)
        :effect (and (door-clear) (has-ball) (not (hands-empty)))
    )
     (:action pick-up-box
        :parameters ()
        :precondition (and (door-open) (hands-empty))
        :effect (and (has-box) (not (hands-empty)))
    )
     (:action pick-up-key
        :parameters ()
        :precondition (hands-empty)
        :effect (and (has-key) (not (hands-empty)))
    )
     (:action restore_hands_empty
        :parameters ()
        :precondition (and )
        :effect (hands-empty)
    )
     (:action unlock-door
        :parameters ()
        :precondition (and (has-key) (door-clear))
        :effect (door-open)
    )
)

(define (problem blockedunlockpickup)
    (:domain blockedunlockpickup)
    (:init (hands-empty))
    (:goal (has-box))
)
