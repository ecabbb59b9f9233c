"""grader.yml's `training` section as the engine core sees it: one switch, and the hooks it calls."""

from __future__ import annotations

from typing import Any

from autograder.config.base import Section


class TrainingSection(Section):
    """training: whether the assignment's training part is graded.

    An assignment with more training settings declares a subclass of this model for the section
    (assignment.yml `config:`) and overrides the hooks below; the core reads nothing else.
    """

    enabled: bool = False
    """Grade the training part (the assignment's training hook)."""

    def summary(self) -> str:
        """The section in a few words, for `validate-config`'s line.

        Returns:
            e.g. "enabled" or "disabled".
        """
        return "enabled" if self.enabled else "disabled"

    def resolved_for(self, has_gpu: bool) -> TrainingSection:
        """This section with choices left to the machine made for one that has (or lacks) a GPU,
        so that every node of a cluster trains the same way.

        Args:
            has_gpu: whether the machines that train offer a GPU.

        Returns:
            The section (this one: nothing to resolve).
        """
        return self

    def ray_options(self) -> dict[str, Any]:
        """What one training task asks of a Ray cluster.

        Returns:
            {"num_cpus": n} and, for a task that needs one, {"gpu": 1} (the executor turns it into
            `num_gpus` or its custom GPU resource).
        """
        return {"num_cpus": 1}
