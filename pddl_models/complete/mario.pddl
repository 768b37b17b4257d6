; Mario, complete and correct (ASGRL Appendix F.2): every mechanism of envs/mario.py.
; Unlike the approximate model of Appendix H.4, this model knows
;   - the tube: entered from the upper platform, it only goes down, to the bottom floor;
;   - the hidden key next to the key, and that the door opens only with both keys;
;   - the one-use ladder: climbing it breaks it (ladder-broken), and it cannot be climbed broken.
; Going down the ladder is left out on purpose: it breaks the ladder and strands the robot on
; the bottom floor, so no goal-reaching trace uses it; with it in the model the tube would no
; longer be a landmark. Climbing needs both keys for the same reason (a climb without them
; breaks the ladder for nothing). So preconditions say what the goal needs, and every landmark
; state can reach the goal (App. F.2). Every atom is one the mario labeler reads.
(define (domain mario_complete)
    (:requirements :strips :typing :negative-preconditions)
    (:predicates (at-upper-platform)
                 (in-tube)
                 (at-bottom)
                 (has-key)
                 (has-hidden-key)
                 (ladder-broken)
                 (at-upper-platform-with-key)
                 (door-open))
    (:action enter_tube
        :parameters ()
        :precondition (and (at-upper-platform))
        :effect (and (in-tube) (not (at-upper-platform))))
    (:action slide_down_tube
        :parameters ()
        :precondition (and (in-tube))
        :effect (and (at-bottom) (not (in-tube))))
    (:action pickup_key
        :parameters ()
        :precondition (and (at-bottom))
        :effect (and (has-key)))
    (:action pickup_hidden_key
        :parameters ()
        :precondition (and (at-bottom))
        :effect (and (has-hidden-key)))
    (:action go_up_the_ladder
        :parameters ()
        :precondition (and (at-bottom) (has-key) (has-hidden-key) (not (ladder-broken)))
        :effect (and (at-upper-platform) (at-upper-platform-with-key) (ladder-broken)
                     (not (at-bottom))))
    (:action unlock_door
        :parameters ()
        :precondition (and (at-upper-platform-with-key) (has-hidden-key))
        :effect (and (door-open)))
)

(define (problem mario_complete_problem)
    (:domain mario_complete)
    (:init (at-upper-platform))
    (:goal (and (door-open))))
