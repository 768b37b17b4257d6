; lockedroom.pddl with the mechanism it leaves out written back in, by hand, as the model's header
; names it: a side room's door must be opened before the key can be taken. `asg mvtr --suggest`
; gives no hint here (no random episode reaches the goal), so this is what a user who has read the
; world's code would add. Landmarks: (side-room-open) < (has-key) < (locked-door-open) < (at-goal).
(define (domain lockedroom)
    (:requirements :strips)
    (:predicates (side-room-open) (has-key) (locked-door-open) (at-goal))
    (:action open-side-room
            :parameters ()
            :precondition (and )
            :effect (and (side-room-open)))
    (:action pick-up-key
            :parameters ()
            :precondition (and (side-room-open))
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
