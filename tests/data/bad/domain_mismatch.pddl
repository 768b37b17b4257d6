; the problem names domain 'elsewhere' but the domain is 'here': an error unless lenient
(define (domain here)
  (:predicates (p) (q))
  (:action go :parameters () :precondition (p) :effect (q)))
(define (problem here-1) (:domain elsewhere) (:init (p)) (:goal (q)))
