; derived predicates: recursion, negation, a universal body
(define (domain graph) (:requirements :derived-predicates :negative-preconditions)
  (:predicates (edge ?a ?b) (reach ?a ?b) (cut ?a) (isolated ?a) (flag))
  (:derived (reach ?a ?b) (or (and (edge ?a ?b) (not (cut ?b))) (exists (?c) (and (reach ?a ?c) (reach ?c ?b)))))
  (:derived (isolated ?a) (forall (?b) (not (reach ?a ?b))))
  (:action cut-node :parameters (?a) :precondition (not (cut ?a)) :effect (cut ?a))
  (:action raise :parameters (?a) :precondition (isolated ?a) :effect (flag)))
(define (problem g1) (:domain graph) (:objects n1 n2 n3 n4)
  (:init (edge n1 n2) (edge n2 n3) (edge n3 n4)) (:goal (flag)))
