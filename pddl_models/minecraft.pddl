; MineCraft: the approximate model of ASGRL (Guan et al., ICML 2022), Appendix H.3.
; The modeller believes one piece of processed wood suffices for plank and stick; the real
; recipe needs several. Documented fix: the listing's landmark text names `at-destination`
; as the final landmark; in this model the goal is (ladder_made), and so is the landmark.
(define (domain minecraft)
    (:requirements :strips :typing)
    (:types wood - object)
    (:predicates (wood-processed)
                 (at-starting-location)
                 (plank_made)
                 (stick_made)
                 (ladder_made))
    (:action get_processed_wood
            :parameters ()
            :precondition (and )
            :effect (and (wood-processed)))
    (:action make_plank
            :parameters ()
            :precondition (and (wood-processed))
            :effect (and (plank_made)))
    (:action make_stick
            :parameters ()
            :precondition (and (wood-processed))
            :effect (and (stick_made)))
    (:action make_ladder
            :parameters ()
            :precondition (and (stick_made) (plank_made))
            :effect (and (ladder_made)))
)

(define (problem prob)
    (:domain minecraft)
    (:objects
        wood0 wood1 - wood)
    (:init
        (at-starting-location))
    (:goal
        (and (ladder_made))
))
