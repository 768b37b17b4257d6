; predicate 'p' declared twice: an error at the second declaration
(define (domain twice)
  (:predicates (p) (q)
               (p ?x))
  (:action go :parameters () :precondition (p) :effect (q)))
(define (problem twice-1) (:domain twice) (:init (p)) (:goal (q)))
