; MiniGrid-UnlockPickup: the approximate model a user would write (in the spirit of ASGRL's models).
; Approximate on purpose: the agent carries one object at a time, so it must drop the key before
; it can pick up the box; the model does not say so. The landmarks are (has-key) < (door-open)
; < (has-box); the box skill has to learn the drop.
(define (domain unlockpickup)
    (:requirements :strips)
    (:predicates (has-key)
                 (door-open)
                 (has-box))
    (:action pick-up-key
            :parameters ()
            :precondition (and )
            :effect (and (has-key)))
    (:action open-door
            :parameters ()
            :precondition (and (has-key))
            :effect (and (door-open)))
    (:action pick-up-box
            :parameters ()
            :precondition (and (door-open))
            :effect (and (has-box)))
)

(define (problem unlockpickup)
    (:domain unlockpickup)
    (:init )
    (:goal (and (has-box))))
