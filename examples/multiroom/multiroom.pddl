; MiniGrid-MultiRoom-N4-S5: the approximate model a user would write, leaving ONE mechanism out.
; Four rooms in a chain; the agent starts in the first, the goal lies in the last. What the user
; knows: walk through the rooms in order, then to the goal.
; Landmarks: (in-room-2) < (in-room-3) < (in-room-4) < (at-goal).
; Left out: the doors between the rooms are shut, and each must be opened (toggled) before the
; agent can pass. The labeler knows this as (door-1-open), (door-2-open) and (door-3-open), door k
; leading from room k to room k+1. The model never mentions the doors.
(define (domain multiroom)
    (:requirements :strips)
    (:predicates (in-room-2)
                 (in-room-3)
                 (in-room-4)
                 (at-goal))
    (:action enter-room-2
            :parameters ()
            :precondition (and )
            :effect (and (in-room-2)))
    (:action enter-room-3
            :parameters ()
            :precondition (and (in-room-2))
            :effect (and (in-room-3)))
    (:action enter-room-4
            :parameters ()
            :precondition (and (in-room-3))
            :effect (and (in-room-4)))
    (:action walk-to-goal
            :parameters ()
            :precondition (and (in-room-4))
            :effect (and (at-goal)))
)

(define (problem multiroom)
    (:domain multiroom)
    (:init )
    (:goal (and (at-goal))))
