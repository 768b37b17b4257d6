; BabyAI-UnlockToUnlock: the approximate model a user would write, leaving ONE mechanism out.
; Three rooms in a row, the agent in the middle one. The ball lies in the left room behind
; locked door A, and A's key lies in the right room. What the user knows: take A's key, unlock
; A, pick up the ball.
; Landmarks: (has-key-a) < (door-a-open) < (has-ball).
; Left out: A's key lies behind a second locked door, B. B's key (in the middle room) must be
; taken and B unlocked first. The labeler knows this as (has-key-b) and (door-b-open), and the
; model never mentions door B.
(define (domain unlocktounlock)
    (:requirements :strips)
    (:predicates (has-key-a)
                 (door-a-open)
                 (has-ball))
    (:action pick-up-key-a
            :parameters ()
            :precondition (and )
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
