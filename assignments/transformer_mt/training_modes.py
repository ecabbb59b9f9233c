"""The training part's modes (grader.yml training.mode): one strategy class each, in one table.

A mode decides where the weights the trusted side scores come from: trained by the grader with
the profile (`recipe`), trained with the notebook's hyperparameter cell (`student_hparams`), or
loaded from a file submitted beside the notebook (`checkpoint`). `run_training_part`
(assignments.transformer_mt.training_part) drives every mode through `TrainingMode`; a new mode is one subclass
added to `TRAINING_MODES`, plus its messages (`training.method.<name>`,
`training.low_bleu_hint.<name>`) in the catalogue.
"""

# The table is also read where only the mode's facts are needed (results_store, the Otter bridge),
# in processes that never load torch: so this module imports only light modules at the top, and
# each method imports the sandbox, torch and mtkit pieces it runs with.

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from assignments.transformer_mt.checkpoint_file import SubmittedCheckpoint, find_checkpoint
from assignments.transformer_mt.settings import TrainingConfig, training_settings
from assignments.transformer_mt.training_loop import train_and_evaluate
from autograder.i18n import t
from mtkit.recipe import recipe_from_profile

if TYPE_CHECKING:
    from assignments.transformer_mt.student_hparams import CellSettings
    from autograder.config import GraderConfig
    from autograder.sandbox import StudentError, Worker, WorkerFailure
    from mtkit.dataset import PreparedData

MODEL_FUNCTIONS = ("Transformer", "create_padding_mask_for_attention", "create_look_ahead_mask_for_attention")


class TrainingMode(ABC):
    """Where the scored weights come from; `run_training_part` calls these steps in order.

    find_checkpoint -> settings -> method -> start_session -> (fit check by the caller) -> evaluate.
    Errors from the worker propagate; the caller words them (`failure_key`, `refusal`).
    """

    name: ClassVar[str]
    # Notebook names required; the worker's session takes them in this order, as globals.
    needed: ClassVar[tuple[str, ...]] = (*MODEL_FUNCTIONS, "calculate_loss")
    session_class: ClassVar[str] = "mtkit.worker_training:TrainingSession"  # the worker-side session it opens
    submits_checkpoint: ClassVar[bool] = False  # a file beside the notebook belongs to the submission
    failure_key: ClassVar[str] = "training.failed.training"  # message when evaluate fails
    shows_recipe: ClassVar[bool] = True  # the report shows the hyperparameters trained with

    def find_checkpoint(self, submission: Path, training: TrainingConfig) -> SubmittedCheckpoint | None:
        """The submitted weights this mode loads (raises `CheckpointRefused` when unusable).

        Args:
            submission: the submitted notebook.
            training: grader.yml's training section.

        Returns:
            The checkpoint, or None for a mode that trains.
        """
        return None

    def settings(self, worker: Worker, profile: dict[str, Any], config: GraderConfig) -> CellSettings:
        """The hyperparameters of this run: the profile's, or the notebook's where the mode reads them;
        their `hparams` are what the model (and, when training, the recipe) use.

        Args:
            worker: the training worker holding the submission.
            profile: the training profile's hyperparameters.
            config: the validated configuration.

        Returns:
            The settings, with `problem` set when the notebook's values cannot be used.
        """
        from assignments.transformer_mt.student_hparams import CellSettings

        return CellSettings(dict(profile))

    @abstractmethod
    def method(self, profile_name: str, settings: CellSettings, checkpoint: SubmittedCheckpoint | None) -> str:
        """How the weights were made, for the student.

        Args:
            profile_name: the training profile's name.
            settings: from `settings`.
            checkpoint: from `find_checkpoint`.

        Returns:
            One sentence in the current language.
        """

    def start_session(
        self,
        worker: Worker,
        hparams: dict[str, Any],
        model_args: list[Any],
        data: PreparedData,
        config: GraderConfig,
        checkpoint: SubmittedCheckpoint | None,
    ) -> int:
        """Build the student's model in the worker (a `ModelSession` with `logits` and `translate`).

        Every session takes the notebook's `needed` names, the model's arguments, the mode's own
        arguments (`session_args`), the training threads and the padding index.

        Args:
            worker: the training worker.
            hparams: the settings' `hparams`.
            model_args: the `Transformer(...)` arguments.
            data: the prepared corpus.
            config: the validated configuration.
            checkpoint: from `find_checkpoint`.

        Returns:
            The session's handle.
        """
        from autograder.sandbox import Global
        from mtkit.constants import PAD_IDX

        own = self.session_args(hparams, data, config, checkpoint)
        threads = training_settings(config).threads
        return worker.new(
            self.session_class,
            [*[Global(name) for name in self.needed], model_args, *own, threads, PAD_IDX],
            seed=config.grading.seed,
        )

    @abstractmethod
    def session_args(
        self, hparams: dict[str, Any], data: PreparedData, config: GraderConfig, checkpoint: SubmittedCheckpoint | None
    ) -> list[Any]:
        """The mode's own arguments of its worker session (between the model's and the threads).

        Args:
            hparams: the settings' `hparams`.
            data: the prepared corpus.
            config: the validated configuration.
            checkpoint: from `find_checkpoint`.

        Returns:
            The arguments, in the session's order.
        """

    def evaluate(
        self,
        worker: Worker,
        session: int,
        hparams: dict[str, Any],
        data: PreparedData,
        budget_s: float,
        details: dict[str, Any],
    ) -> dict[str, Any]:
        """Produce the final weights and score them on the trusted side: by default the weights the
        session holds, as they are (with the test split); a mode that trains overrides this.

        Args:
            worker: the training worker.
            session: from `start_session`.
            hparams: the settings' `hparams`.
            data: the prepared corpus.
            budget_s: the profile's time budget.
            details: the report details; a training mode adds its curve and history.

        Returns:
            The evaluation (assignments.transformer_mt.training_eval.evaluate_weights).
        """
        from assignments.transformer_mt.training_eval import evaluate_weights

        return evaluate_weights(worker, session, hparams, data, with_test=True)

    def refusal(self, error: StudentError | WorkerFailure) -> str | None:
        """Whether an error at session start means the submission is not gradable (not a skip).

        Args:
            error: raised while the session started.

        Returns:
            The reason the part is not graded, or None when the error is an ordinary skip.
        """
        return None


class RecipeMode(TrainingMode):
    """The grader trains the student's model with the profile's sizes and recipe."""

    name = "recipe"

    def method(self, profile_name: str, settings: CellSettings, checkpoint: SubmittedCheckpoint | None) -> str:
        return t("training.method.recipe", profile=profile_name)

    def session_args(
        self, hparams: dict[str, Any], data: PreparedData, config: GraderConfig, checkpoint: SubmittedCheckpoint | None
    ) -> list[Any]:
        from mtkit.worker_training import flatten

        target = training_settings(config).threshold_bleu
        recipe = recipe_from_profile(hparams, seed=config.grading.seed, target_bleu=target)
        src_flat, src_len = flatten(data.splits["train"].src)
        tgt_flat, tgt_len = flatten(data.splits["train"].tgt)
        return [dict(vars(recipe)), float(hparams["label_smoothing"]), src_flat, src_len, tgt_flat, tgt_len]

    def evaluate(
        self,
        worker: Worker,
        session: int,
        hparams: dict[str, Any],
        data: PreparedData,
        budget_s: float,
        details: dict[str, Any],
    ) -> dict[str, Any]:
        evaluation, curve, summary = train_and_evaluate(
            worker,
            session,
            hparams,
            data,
            timeout_s=budget_s * 1.25 + 60,
            budget_s=budget_s,
            bar_bleu=details.get("threshold_bleu"),
        )
        details["bleu_curve"] = curve
        if summary is not None:
            details["training"] = {
                k: summary[k] for k in ("step", "epochs", "stop_reason", "wall_s", "stopped_by") if k in summary
            }
            details["history"] = json.loads(summary["history"])
        return evaluation


class StudentHparamsMode(RecipeMode):
    """The grader trains with the notebook's hyperparameter cell (within training.hparam_bounds)."""

    name = "student_hparams"

    def settings(self, worker: Worker, profile: dict[str, Any], config: GraderConfig) -> CellSettings:
        from assignments.transformer_mt.student_hparams import CELL_NAMES, student_recipe

        settings = read_settings(worker, CELL_NAMES, profile, config)
        settings.hparams = student_recipe(settings)
        return settings

    def method(self, profile_name: str, settings: CellSettings, checkpoint: SubmittedCheckpoint | None) -> str:
        return t("training.method.student_hparams", settings=settings.summary(), profile=profile_name)


class CheckpointMode(TrainingMode):
    """No training: the weights submitted beside the notebook, loaded into the student's model."""

    name = "checkpoint"
    needed = MODEL_FUNCTIONS
    session_class = "mtkit.worker_checkpoint:CheckpointSession"
    submits_checkpoint = True
    failure_key = "training.failed.evaluation"
    shows_recipe = False  # a checkpoint only uses the model sizes (hyperparameters)

    def find_checkpoint(self, submission: Path, training: TrainingConfig) -> SubmittedCheckpoint | None:
        return find_checkpoint(submission, training.checkpoint_names, training.checkpoint_max_mb)

    def settings(self, worker: Worker, profile: dict[str, Any], config: GraderConfig) -> CellSettings:
        from assignments.transformer_mt.student_hparams import MODEL_NAMES

        return read_settings(worker, MODEL_NAMES, profile, config)

    def method(self, profile_name: str, settings: CellSettings, checkpoint: SubmittedCheckpoint | None) -> str:
        assert checkpoint is not None  # find_checkpoint returned it
        return t(
            "training.method.checkpoint", name=checkpoint.name, size_mb=checkpoint.size_mb, settings=settings.summary()
        )

    def session_args(
        self, hparams: dict[str, Any], data: PreparedData, config: GraderConfig, checkpoint: SubmittedCheckpoint | None
    ) -> list[Any]:
        import torch

        assert checkpoint is not None  # find_checkpoint returned it
        data_bytes = torch.frombuffer(bytearray(checkpoint.data), dtype=torch.uint8)  # (N,) the file
        return [data_bytes, checkpoint.name]

    def refusal(self, error: StudentError | WorkerFailure) -> str | None:
        # The worker's loader refuses a file that is not weights only: the submission, not the code, is at fault.
        if getattr(error, "exc_type", "") == "CheckpointError":
            return getattr(error, "message", "")
        return None


TRAINING_MODES: dict[str, TrainingMode] = {
    mode.name: mode for mode in (RecipeMode(), StudentHparamsMode(), CheckpointMode())
}


def read_settings(
    worker: Worker, names: tuple[str, ...], profile: dict[str, Any], config: GraderConfig
) -> CellSettings:
    """The notebook's hyperparameter cell (`names`), checked against training.hparam_bounds.

    Args:
        worker: the training worker holding the submission.
        names: the cell's names this mode uses.
        profile: the profile's hyperparameters (for names the cell leaves out).
        config: the validated configuration.

    Returns:
        The settings.
    """
    from assignments.transformer_mt.student_hparams import apply_cell, read_cell

    described = read_cell(worker, names, timeout_s=config.worker.timeout_s)
    return apply_cell(profile, described, training_settings(config).hparam_bounds, names)
