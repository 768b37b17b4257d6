; MineCraft, complete and correct (ASGRL Appendix F.2): every mechanism of envs/minecraft.py.
; Unlike the approximate model of Appendix H.3, this model knows that
;   - a plank and a stick each cost one processed wood, so the ladder needs two pieces;
;   - the kiln (workshop 1) has fuel for one batch: it processes all the raw wood carried, once
;     (kiln-used), so both pieces must be carried there together.
; Counting is what STRIPS cannot do: (has-raw-wood) / (has-two-raw-wood) read one and two
; pieces carried; after the batch the model keeps (wood-processed) true through the plank, as
; at least one processed piece is left for the stick. The labeler has no atom for "two or more
; processed wood", so the model cannot say that a second plank would use up the stick's wood
; (a plan making two planks is not in this model's landmarks, but it is a model plan).
; (at-starting-location) of App. H.3 is left out: it turns false on the first move and no
; action of the model could delete it. Every atom is one the minecraft labeler reads.
(define (domain minecraft_complete)
    (:requirements :strips :typing :negative-preconditions)
    (:predicates (has-raw-wood)
                 (has-two-raw-wood)
                 (kiln-used)
                 (wood-processed)
                 (plank_made)
                 (stick_made)
                 (ladder_made))
    (:action collect_wood
        :parameters ()
        :precondition (and (not (kiln-used)))
        :effect (and (has-raw-wood)))
    (:action collect_second_wood
        :parameters ()
        :precondition (and (has-raw-wood) (not (kiln-used)))
        :effect (and (has-two-raw-wood)))
    (:action process_wood
        :parameters ()
        :precondition (and (has-two-raw-wood) (not (kiln-used)))
        :effect (and (wood-processed) (kiln-used) (not (has-raw-wood)) (not (has-two-raw-wood))))
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
        :precondition (and (plank_made) (stick_made))
        :effect (and (ladder_made)))
)

(define (problem minecraft_complete_problem)
    (:domain minecraft_complete)
    (:init)
    (:goal (and (ladder_made))))
