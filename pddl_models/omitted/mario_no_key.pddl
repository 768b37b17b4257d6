; Mario with the hidden key left out: the user believes the door opens from the upper platform.
; The world still wants the key from the bottom (envs/mario.py); asg must find it (issue 17).
(define (domain Mario)
    (:requirements :strips)
    (:predicates (at-upper-platform) (at-bottom) (door-open))
    (:action go_down_the_ladder
            :parameters ()
            :precondition (and (at-upper-platform))
            :effect (and (at-bottom)))
    (:action unlock_door
            :parameters ()
            :precondition (and (at-bottom))
            :effect (and (door-open)))
)

(define (problem prob)
    (:domain Mario)
    (:init (at-upper-platform))
    (:goal (and (door-open))))
