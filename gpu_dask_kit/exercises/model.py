"""What an exercise is, and what judging it returns (shared by the catalogs and ``check``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Exercise", "Hint", "Verdict"]


class Hint(Exception):
    """Raised by a judge for a wrong answer; the message is the hint shown to the learner."""


@dataclass(frozen=True)
class Exercise:
    """One exercise: the answer names, a reference solution (code), and a judge.

    ``judge(answers, namespace)`` raises :class:`Hint` for a wrong answer and returns the "Correct" text.
    ``hint`` is the general hint added when the answer could not even be evaluated. ``early(answers)``, when
    given, looks at the answers filled in so far while others are still ``...`` (the answer cell raised half-way)
    and raises :class:`Hint` when it sees why. ``cluster``: the judge asks the running cluster (a closed one is said plainly).
    """

    key: str
    names: tuple[str, ...]
    solution: str
    judge: Callable[[dict[str, Any], dict[str, Any]], str]
    hint: str
    early: Callable[[dict[str, Any]], None] | None = None
    cluster: bool = True


@dataclass(frozen=True)
class Verdict:
    """The result of judging: ``correct``, ``answered`` and the message printed to the learner."""

    correct: bool
    answered: bool
    message: str

    def __str__(self) -> str:
        return self.message
