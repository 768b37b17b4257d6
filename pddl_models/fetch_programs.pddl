; The program library of AlphaNPI-X (Pierrot et al. 2020), Section 3, Table 1, Table 3, Appendix A/C:
; a Fetch arm, four indexed blocks (b0, b1 orange; b2, b3 blue) and two zones (orange, blue).
;
; THE PDDL PART is a plain STRIPS model (typing, negative preconditions, equality) that the
; planning core parses and grounds like any other file. Its actions are the ATOMIC programs:
;   (stack ?a ?b)          = Stack_a_b          move block a onto block b
;   (move_to_zone ?b ?z)   = Move_To_Zone_b_Z   move block b into a free slot of zone z
; A block is clear when no block is on it; without conditional effects that reads
; "(not (on bK ?x)) for every block bK", so the four blocks are domain constants.
; (zone-full ?z) is OBSERVED: the environment's labeler decides it (both slots taken) and no
; action changes it, so within one plan the model assumes a zone never fills up (every program
; of the library puts at most two blocks, the two of its colour, in a zone).
; The problem is the evaluation start (every block on the table, zones empty) with the goal
; of Clean_Table, so the file is also an ordinary planning task.
;
; THE HIERARCHY is declared in structured comments, which every PDDL parser skips. A directive
; is a comment line whose first word starts with '@'; non-empty comment lines right after it
; whose first word does not start with '@' continue it (for long formulas). Directives:
;   - @display OBJ=TEXT ...      how objects print in program names (default: upper case)
;   - @observed PRED ...         predicates the environment observes but no action changes;
;                                other predicates no action changes are static (decided when
;                                compiling, from :init); '=' is equality of objects
;   - @program Family PARAMS     starts a program family; PARAMS as in PDDL (?z - zone)
;   - @level N                   0 = atomic; a program may only call programs of lower levels
;   - @action NAME               (level 0) the PDDL action it is: pre = the action's
;                                precondition, post = its effect (adds and negated deletes)
;   - @calls Family ...          (level >= 1) the families it may call (default: all lower)
;   - @pre FORMULA, @post FORMULA  (level >= 1) conditions over the model's atoms in PDDL goal
;                                syntax: and, or, not, imply, exists, forall, =
;   - @expand ?v ...             the order in which parameters expand (outermost first)
;   - @description TEXT          Table 1 / Table 3 wording
; Expanding every family over the objects, skipping instances whose precondition is false by
; static facts alone (Stack_0_0), gives the 20 atomic and 7 non-atomic programs of Table 3,
; named Family_ARG_ARG (Stack_0_1, Move_To_Zone_2_BLUE, Stack_All_To_Zone_ORANGE).
;
; @display b0=0 b1=1 b2=2 b3=3 orange=ORANGE blue=BLUE
; @observed zone-full
;
; @program Stack ?a ?b - block
;   @level 0
;   @action stack
;   @description Stack a block on another block.
; @program Move_To_Zone ?b - block ?z - zone
;   @level 0
;   @action move_to_zone
;   @expand ?z ?b
;   @description Move a block to a colour zone.
;
; @program Stack_All_To_Zone ?z - zone
;   @level 1
;   @calls Stack Move_To_Zone
;   @pre (and)
;   @post (exists (?a ?b - block) (and (colour ?a ?z) (colour ?b ?z) (not (= ?a ?b))
;         (in-zone ?a ?z) (on ?b ?a)))
;   @description Stack blocks of the same colour in a zone.
; @program Move_All_To_Zone ?z - zone
;   @level 1
;   @calls Stack Move_To_Zone
;   @pre (and)
;   @post (forall (?b - block) (imply (colour ?b ?z) (in-zone ?b ?z)))
;   @description Move blocks of the same colour to a zone.
; @program Stack_All_Blocks
;   @level 1
;   @calls Stack Move_To_Zone
;   @pre (and)
;   @post (exists (?a ?b ?c ?d - block)
;         (and (not (= ?a ?b)) (not (= ?a ?c)) (not (= ?a ?d)) (not (= ?b ?c)) (not (= ?b ?d))
;         (not (= ?c ?d)) (on ?b ?a) (on ?c ?b) (on ?d ?c)))
;   @description Stack all blocks together in any order.
; @program Clean_Table
;   @level 2
;   @calls Stack Move_To_Zone Stack_All_To_Zone Move_All_To_Zone Stack_All_Blocks
;   @pre (and)
;   @post (forall (?b - block ?z - zone) (imply (colour ?b ?z) (in-zone ?b ?z)))
;   @description Move all blocks to their colour zone.
; @program Clean_And_Stack
;   @level 2
;   @calls Stack Move_To_Zone Stack_All_To_Zone Move_All_To_Zone Stack_All_Blocks
;   @pre (and)
;   @post (forall (?z - zone) (exists (?a ?b - block) (and (colour ?a ?z) (colour ?b ?z)
;         (not (= ?a ?b)) (in-zone ?a ?z) (on ?b ?a))))
;   @description Stack blocks of the same colour in zones.

(define (domain fetch_blocks)
  (:requirements :strips :typing :negative-preconditions :equality)
  (:types block zone)
  (:constants b0 b1 b2 b3 - block orange blue - zone)
  (:predicates
    (on ?a - block ?b - block)
    (on-table ?b - block)
    (in-zone ?b - block ?z - zone)
    (zone-full ?z - zone)
    (colour ?b - block ?z - zone))

  (:action stack
    :parameters (?a - block ?b - block)
    :precondition (and (not (= ?a ?b))
                       (not (on b0 ?a)) (not (on b1 ?a)) (not (on b2 ?a)) (not (on b3 ?a))
                       (not (on b0 ?b)) (not (on b1 ?b)) (not (on b2 ?b)) (not (on b3 ?b)))
    :effect (and (on ?a ?b)
                 (not (on ?a b0)) (not (on ?a b1)) (not (on ?a b2)) (not (on ?a b3))
                 (not (on-table ?a)) (not (in-zone ?a orange)) (not (in-zone ?a blue))))

  (:action move_to_zone
    :parameters (?b - block ?z - zone)
    :precondition (and (not (in-zone ?b ?z)) (not (zone-full ?z))
                       (not (on b0 ?b)) (not (on b1 ?b)) (not (on b2 ?b)) (not (on b3 ?b)))
    :effect (and (in-zone ?b ?z) (on-table ?b)
                 (not (on ?b b0)) (not (on ?b b1)) (not (on ?b b2)) (not (on ?b b3))
                 (not (in-zone ?b orange)) (not (in-zone ?b blue))))
)

(define (problem fetch_blocks_on_table)
  (:domain fetch_blocks)
  (:init (on-table b0) (on-table b1) (on-table b2) (on-table b3)
         (colour b0 orange) (colour b1 orange) (colour b2 blue) (colour b3 blue))
  (:goal (and (in-zone b0 orange) (in-zone b1 orange) (in-zone b2 blue) (in-zone b3 blue))))
