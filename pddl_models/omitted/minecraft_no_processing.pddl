; MineCraft with the wood processing left out: the user believes planks and sticks come straight
; from the trees. The world still processes wood first (envs/minecraft.py) (issue 17).
(define (domain minecraft)
    (:requirements :strips)
    (:predicates (at-starting-location) (plank_made) (stick_made) (ladder_made))
    (:action make_plank
            :parameters ()
            :precondition (and )
            :effect (and (plank_made)))
    (:action make_stick
            :parameters ()
            :precondition (and )
            :effect (and (stick_made)))
    (:action make_ladder
            :parameters ()
            :precondition (and (stick_made) (plank_made))
            :effect (and (ladder_made)))
)

(define (problem prob)
    (:domain minecraft)
    (:init (at-starting-location))
    (:goal (and (ladder_made))))
