(define (domain d)
  (:requirements :strips)
  (:predicates (p) (q))
  (:action a :parameters () :precondition (p) :effect (q)))
