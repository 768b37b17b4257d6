; Household-V1 with the key left out: the user believes the door only needs charging.
; The world still locks it (envs/household.py); asg must find a key on its own (issue 17).
(define (domain grid_world)
    (:requirements :strips)
    (:predicates (at-starting-room) (door-open) (door-ajar) (charged) (at-final-room) (at-destination))
    (:action charge_door
            :parameters ()
            :precondition (and )
            :effect (and (charged)))
    (:action open_door
            :parameters ()
            :precondition (and (charged))
            :effect (and (door-open)))
    (:action pass_through_door
            :parameters ()
            :precondition (and (door-open))
            :effect (and (at-final-room) (door-ajar)))
    (:action go_to_destination
        :parameters ()
        :precondition (and (at-final-room))
        :effect (and (at-destination)))
)

(define (problem prob)
    (:domain grid_world)
    (:init (at-starting-room))
    (:goal (and (at-destination))))
