(define (domain grid_world)
    (:requirements :strips :typing)
    (:types
        key - object
    )
    (:constants red - key)
    (:predicates (at-destination) (at-dock) (at-final-room) (at-starting-room) (charged) (door-ajar) (door-open) (has-key) (holding ?x - key))
    (:action achieve_at_dock_and_charged
        :parameters ()
        :precondition (at-starting-room)
        :effect (and (at-dock) (charged))
    )
     (:action go_to_destination
        :parameters ()
        :precondition (and (at-final-room) (door-ajar))
        :effect (at-destination)
    )
     (:action open_door
        :parameters ()
        :precondition (and (holding red) (charged))
        :effect (door-open)
    )
     (:action pass_through_door
        :parameters ()
        :precondition (door-open)
        :effect (and (at-final-room) (door-ajar))
    )
     (:action pickup_key
        :parameters (?k - key)
        :precondition (and )
        :effect (and (has-key) (holding ?k))
    )
)

(define (problem prob)
    (:domain grid_world)
    (:objects green yellow - key)
    (:init (at-starting-room))
    (:goal (at-destination))
)
