; keyinbox.pddl as `asg mvtr --suggest --write` repaired it (issue 39 on a world of one's own), made by
;   cd examples/keyinbox && asg mvtr --env BabyAI-KeyInBox-v0 --labeler labels:KEYINBOX --model keyinbox.pddl \
;       --episodes 40 --max-steps 10000 --seed 0 --suggest --write keyinbox_repaired.pddl
; (13.6 min on this 2-core machine, beside other work; this comment added afterwards). The one hint applied: (box-opened), the mechanism the
; model left out, before (has-key). New landmark sequence: (box-opened) < (has-key) < (door-open).
(define (domain keyinbox)
    (:requirements :strips)
    (:predicates (box-opened) (door-open) (has-key))
    (:action achieve_box_opened
        :parameters ()
        :precondition (and )
        :effect (box-opened)
    )
     (:action open-door
        :parameters ()
        :precondition (has-key)
        :effect (door-open)
    )
     (:action pick-up-key
        :parameters ()
        :precondition (box-opened)
        :effect (has-key)
    )
)

(define (problem keyinbox)
    (:domain keyinbox)
    (:init )
    (:goal (door-open))
)
