; Household, complete and correct (ASGRL Appendix F.2): every mechanism of envs/household.py.
; Unlike the approximate models of Appendix H.1/H.2, this model knows that
;   - three keys lie in the starting room, the robot holds at most one and cannot drop it, and
;     only the red key unlocks the door (holding yellow or green is a dead end);
;   - the battery starts low and only the dock, in the starting room, charges it; the last step
;     onto the destination drains an uncharged battery (so go_to_destination needs (charged));
;   - the door is locked; the robot unlocks it from the starting room, holding the red key;
;   - the robot passes through the open doorway (door-ajar: in the doorway, door open) and the
;     door shuts behind it once it steps into the final room (door-open turns false), so the
;     dock cannot be reached again.
; Dead-end moves are left out (an uncharged robot entering the final room; a wrong key), or
; rather: preconditions say what the goal needs, so that every landmark state can still reach
; the goal ("landmark fluents uniquely capture MDP states with non-zero goal-reaching
; probability", App. F.2). Every atom is one the household labeler reads.
(define (domain household_complete)
    (:requirements :strips :typing :negative-preconditions)
    (:types key - object)
    (:constants yellow green red - key)
    (:predicates (at-starting-room)
                 (holding ?k - key)
                 (charged)
                 (door-locked)
                 (door-open)
                 (door-ajar)
                 (at-final-room)
                 (at-destination))
    (:action pickup_key
        :parameters (?k - key)
        :precondition (and (at-starting-room)
                           (not (holding yellow)) (not (holding green)) (not (holding red)))
        :effect (and (holding ?k)))
    (:action charge_at_dock
        :parameters ()
        :precondition (and (at-starting-room))
        :effect (and (charged)))
    (:action unlock_door
        :parameters ()
        :precondition (and (at-starting-room) (holding red) (door-locked))
        :effect (and (door-open) (not (door-locked))))
    (:action enter_doorway
        :parameters ()
        :precondition (and (at-starting-room) (door-open))
        :effect (and (door-ajar) (not (at-starting-room))))
    (:action pass_through_door
        :parameters ()
        :precondition (and (door-ajar) (charged))
        :effect (and (at-final-room) (not (door-ajar)) (not (door-open))))
    (:action go_to_destination
        :parameters ()
        :precondition (and (at-final-room) (charged))
        :effect (and (at-destination)))
)

(define (problem household_complete_problem)
    (:domain household_complete)
    (:init (at-starting-room) (door-locked))
    (:goal (and (at-destination))))
