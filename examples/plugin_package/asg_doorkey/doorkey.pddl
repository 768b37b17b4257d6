; MiniGrid-DoorKey: the approximate model a user would write (in the spirit of ASGRL's models).
; It names what must become true, in order, and nothing of how: no positions, no turning, no
; facing the key or the door. The landmarks are (has-key) < (door-open) < (at-goal); the skills
; learn the navigation the model leaves out.
(define (domain doorkey)
    (:requirements :strips)
    (:predicates (has-key)
                 (door-open)
                 (at-goal))
    (:action pick-up-key
            :parameters ()
            :precondition (and )
            :effect (and (has-key)))
    (:action open-door
            :parameters ()
            :precondition (and (has-key))
            :effect (and (door-open)))
    (:action walk-to-goal
            :parameters ()
            :precondition (and (door-open))
            :effect (and (at-goal)))
)

(define (problem doorkey)
    (:domain doorkey)
    (:init )
    (:goal (and (at-goal))))
