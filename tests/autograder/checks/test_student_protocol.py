"""Both student sides (the sandboxed worker, the in-process reference) serve the `Student` protocol."""

from __future__ import annotations

from autograder.assignment import load_assignment
from autograder.assignment_folder import available_assignments
from autograder.checks.inprocess import InProcessStudent
from autograder.checks.student import Student
from autograder.sandbox import Worker

# Checked by mypy (`make lint`): each class's methods must accept every call the protocol allows.
WORKER_CLASS: type[Student] = Worker
IN_PROCESS_CLASS: type[Student] = InProcessStudent


def test_each_assignments_reference_student_is_a_student() -> None:
    for name in available_assignments():
        student = load_assignment(name).reference_student()
        assert isinstance(student, InProcessStudent)
        assert isinstance(student, Student)  # the protocol's methods are there at run time too


def test_the_worker_class_has_every_method_of_the_protocol() -> None:
    wanted = {"has", "call", "new", "params", "modules", "load_state", "run"}
    assert all(callable(getattr(WORKER_CLASS, name, None)) for name in wanted)
    assert all(callable(getattr(IN_PROCESS_CLASS, name, None)) for name in wanted)
