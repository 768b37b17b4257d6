; Household-V2: the smaller approximate model of ASGRL (Guan et al., ICML 2022), Appendix H.2.
; The modeller knows neither the locked door nor the need to recharge.
(define (domain grid_world)
    (:requirements :strips :typing)
    (:predicates (at-starting-room)
                 (door-open)
                 (door-ajar)
                 (at-final-room)
                 (at-destination))
    (:action pass_through_door
            :parameters ()
            :precondition (and )
            :effect (and (at-final-room)
                         (door-ajar)))
    (:action go_to_destination
        :parameters ()
        :precondition (and (at-final-room))
        :effect (and (at-destination)))
)

(define (problem prob)
    (:domain grid_world)
    (:objects
    )
    (:init
        (at-starting-room))
    (:goal
        (and (at-destination))
))
