; unlocktounlock.pddl with the mechanism it leaves out written back in, by hand, as the model's
; header names it: B's key must be taken and door B opened before A's key can be taken. These are
; the two atoms `asg mvtr --suggest` ranks first on this world (docs/asgrl.md, the omitted worlds'
; table). Landmarks: (has-key-b) < (door-b-open) < (has-key-a) < (door-a-open) < (has-ball).
(define (domain unlocktounlock)
    (:requirements :strips)
    (:predicates (has-key-b) (door-b-open) (has-key-a) (door-a-open) (has-ball))
    (:action pick-up-key-b
            :parameters ()
            :precondition (and )
            :effect (and (has-key-b)))
    (:action unlock-door-b
            :parameters ()
            :precondition (and (has-key-b))
            :effect (and (door-b-open)))
    (:action pick-up-key-a
            :parameters ()
            :precondition (and (door-b-open))
            :effect (and (has-key-a)))
    (:action unlock-door-a
            :parameters ()
            :precondition (and (has-key-a))
            :effect (and (door-a-open)))
    (:action pick-up-ball
            :parameters ()
            :precondition (and (door-a-open))
            :effect (and (has-ball)))
)

(define (problem unlocktounlock)
    (:domain unlocktounlock)
    (:init )
    (:goal (and (has-ball))))
