; Household-V1: the approximate model of ASGRL (Guan et al., ICML 2022), Appendix H.1.
; Domain and problem stand in one file, as the paper prints them.
; One documented fix: the listing declares (charge) but uses (charged); we declare (charged).
; The model is approximate on purpose: it believes any key opens the door and that
; pass_through_door leaves the door ajar while the robot is in the final room.
(define (domain grid_world)
    (:requirements :strips :typing)
    (:types key - object)
    (:predicates  (has-key)
                  (at-starting-room)
                  (holding ?x - key)
                  (door-open)
                  (door-ajar)
                  (charged)
                  (at-final-room)
                  (at-destination))
    (:action pickup_key
            :parameters (?k - key)
            :precondition (and )
            :effect (and (has-key) (holding ?k)))
    (:action charge_door
            :parameters ()
            :precondition (has-key)
            :effect (and (charged)))
    (:action open_door
            :parameters ()
            :precondition (has-key)
            :effect (and (door-open)))
    (:action pass_through_door
            :parameters ()
            :precondition (and (door-open) (charged))
            :effect (and (at-final-room) (door-ajar)))
    (:action go_to_destination
        :parameters ()
        :precondition (and (at-final-room))
        :effect (and (at-destination)))
)

(define (problem prob)
    (:domain grid_world)
    (:objects
        yellow green red - key)
    (:init
        (at-starting-room))
    (:goal
        (and (at-destination))
))
