; BabyAI-KeyInBox: the approximate model a user would write, leaving ONE mechanism out.
; The agent's room has a locked door, and the mission is to open it. What the user knows: take
; the key, open the door.
; Landmarks: (has-key) < (door-open).
; Left out: the key is hidden in a box. The box must be opened (toggled) first, and then it
; leaves the key in its place. The labeler knows this as (box-opened), and the model never
; mentions the box.
(define (domain keyinbox)
    (:requirements :strips)
    (:predicates (has-key)
                 (door-open))
    (:action pick-up-key
            :parameters ()
            :precondition (and )
            :effect (and (has-key)))
    (:action open-door
            :parameters ()
            :precondition (and (has-key))
            :effect (and (door-open)))
)

(define (problem keyinbox)
    (:domain keyinbox)
    (:init )
    (:goal (and (door-open))))
