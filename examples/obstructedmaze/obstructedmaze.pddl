; MiniGrid-ObstructedMaze-1Dl: the approximate model a user would write, leaving ONE mechanism out.
; Two rooms joined by a locked door; the key lies in the agent's room, the blue ball in the other.
; What the user knows: take the key, unlock the door, pick up the ball.
; Landmarks: (has-key) < (door-open) < (has-ball).
; Left out: the agent holds one object at a time, so it must put the key down before it can pick
; up the ball. The labeler knows this as (hands-empty), and the model never mentions it.
(define (domain obstructedmaze)
    (:requirements :strips)
    (:predicates (has-key)
                 (door-open)
                 (has-ball))
    (:action pick-up-key
            :parameters ()
            :precondition (and )
            :effect (and (has-key)))
    (:action unlock-door
            :parameters ()
            :precondition (and (has-key))
            :effect (and (door-open)))
    (:action pick-up-ball
            :parameters ()
            :precondition (and (door-open))
            :effect (and (has-ball)))
)

(define (problem obstructedmaze)
    (:domain obstructedmaze)
    (:init )
    (:goal (and (has-ball))))
