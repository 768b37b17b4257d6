; MiniGrid-BlockedUnlockPickup: the approximate model a user would write, leaving mechanisms out.
; Two rooms joined by a locked door; the key lies in the agent's room, the box in the other.
; What the user knows: take the key, unlock the door, pick up the box.
; Landmarks: (has-key) < (door-open) < (has-box).
; Left out: a ball lies in front of the door, on the agent's side, and must be moved first; and
; the agent holds one object at a time, so the ball and then the key must be put down again. The
; labeler knows these as (door-clear), (has-ball) and (hands-empty); the model mentions none.
(define (domain blockedunlockpickup)
    (:requirements :strips)
    (:predicates (has-key)
                 (door-open)
                 (has-box))
    (:action pick-up-key
            :parameters ()
            :precondition (and )
            :effect (and (has-key)))
    (:action unlock-door
            :parameters ()
            :precondition (and (has-key))
            :effect (and (door-open)))
    (:action pick-up-box
            :parameters ()
            :precondition (and (door-open))
            :effect (and (has-box)))
)

(define (problem blockedunlockpickup)
    (:domain blockedunlockpickup)
    (:init )
    (:goal (and (has-box))))
