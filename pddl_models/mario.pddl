; Mario: the approximate model of ASGRL (Guan et al., ICML 2022), Appendix H.4.
; It knows nothing of the tube, the hidden key or the one-use ladder.
(define (domain Mario)
    (:requirements :strips :typing)
    (:types key - object)
    (:predicates  (has-key)
                  (at-upper-platform)
                  (at-bottom)
                  (at-upper-platform-with-key)
                  (door-open))
    (:action go_down_the_ladder
            :parameters ()
            :precondition (and (at-upper-platform))
            :effect (and (at-bottom) ))
    (:action pickup_key
            :parameters ()
            :precondition (and (at-bottom))
            :effect (and (has-key) ))
    (:action go_up_the_ladder
            :parameters ()
            :precondition (and (has-key) (at-bottom))
            :effect (and (at-upper-platform-with-key)))
    (:action unlock_door
            :parameters ()
            :precondition (and (at-upper-platform-with-key))
            :effect (and (door-open)))
)

(define (problem prob)
    (:domain Mario)
    (:objects
    )
    (:init
        (at-upper-platform))
    (:goal
        (and (door-open))
))
