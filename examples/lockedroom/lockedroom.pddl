; MiniGrid-LockedRoom: the approximate model a user would write, leaving ONE mechanism out.
; Six side rooms open onto a hallway; the goal lies in the locked one, and the key of its colour
; in another. What the user knows: get the key, unlock the locked door, walk to the goal.
; Landmarks: (has-key) < (locked-door-open) < (at-goal).
; Left out: the key's room is itself closed. Its door must be opened before the key can be
; reached. The labeler knows this as (side-room-open), and the model never mentions it.
(define (domain lockedroom)
    (:requirements :strips)
    (:predicates (has-key)
                 (locked-door-open)
                 (at-goal))
    (:action pick-up-key
            :parameters ()
            :precondition (and )
            :effect (and (has-key)))
    (:action unlock-door
            :parameters ()
            :precondition (and (has-key))
            :effect (and (locked-door-open)))
    (:action walk-to-goal
            :parameters ()
            :precondition (and (locked-door-open))
            :effect (and (at-goal)))
)

(define (problem lockedroom)
    (:domain lockedroom)
    (:init )
    (:goal (and (at-goal))))
