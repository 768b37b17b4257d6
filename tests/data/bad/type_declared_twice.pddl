; IPC 2006 storage declares 'area' twice (- object, then - surface). Fast Downward's translator
; reads one type 'area' below both, so 'drop' applies to the area a1 (?s - surface); asg reads
; it the same way, with a warning at the second declaration.
(define (domain storage-mini)
  (:requirements :typing)
  (:types hoist surface place area - object
          crate - surface
          area - surface)
  (:predicates (at ?h - hoist ?a - area) (clear ?s - surface) (on ?c - crate ?s - surface))
  (:action drop
    :parameters (?h - hoist ?c - crate ?s - surface)
    :precondition (and (at ?h ?s) (clear ?s))
    :effect (and (on ?c ?s) (not (clear ?s)))))
(define (problem storage-mini-1) (:domain storage-mini)
  (:objects h - hoist c - crate a1 - area)
  (:init (at h a1) (clear a1))
  (:goal (on c a1)))
