; 'room' declared below 'place' and below 'thing', two unrelated types: asg's types have one
; parent each, so this is an error naming the second declaration
(define (domain parents)
  (:requirements :typing)
  (:types place thing - object
          room - place
          room - thing)
  (:predicates (at ?r - room))
  (:action stay :parameters (?r - room) :precondition (at ?r) :effect (at ?r)))
(define (problem parents-1) (:domain parents) (:objects r - room) (:init (at r)) (:goal (at r)))
