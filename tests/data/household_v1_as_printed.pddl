; ASGRL Appendix H.1 exactly as printed: declares (charge) but uses (charged).
(define (domain grid_world)
    (:requirements :strips :typing)
    (:types key - object)
    (:predicates  (has-key)
                  (at-starting-room)
                  (holding ?x - key)
                  (door-open)
                  (door-ajar)
                  (charge)
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
