(define (domain d)
  (:predicates (p))
  (:action a :parameters () :precondition (p) :effect (p))
