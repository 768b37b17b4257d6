; Household-V1 with the battery left out: the user does not know the door must be charged.
; The world still needs it (envs/household.py); asg must find the charging on its own (issue 17).
(define (domain grid_world)
    (:requirements :strips :typing)
    (:types key - object)
    (:predicates (has-key) (at-starting-room) (holding ?x - key) (door-open) (door-ajar)
                 (at-final-room) (at-destination))
    (:action pickup_key
            :parameters (?k - key)
            :precondition (and )
            :effect (and (has-key) (holding ?k)))
    (:action open_door
            :parameters ()
            :precondition (has-key)
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
    (:objects yellow green red - key)
    (:init (at-starting-room))
    (:goal (and (at-destination))))
