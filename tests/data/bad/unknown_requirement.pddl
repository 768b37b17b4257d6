; ':foo' is no PDDL requirement
(define (domain flags)
  (:requirements :strips :foo)
  (:predicates (p) (q))
  (:action go :parameters () :precondition (p) :effect (q)))
(define (problem flags-1) (:domain flags) (:init (p)) (:goal (q)))
