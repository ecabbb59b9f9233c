"""Worker side of Part 1's training part: train the student's Encoder on sequence reversal.

This file is sent as text into the sandboxed worker (as part of the helpers source, see
checks/helpers.py) and must stay plain torch with no imports from the project. The grader owns
everything but the Encoder: the data, the output head, the optimiser and the loop.

The task: a row holds n ordinary tokens (n varies per row) followed by padding; the target at
position i < n is the token at position n - 1 - i. Which position to copy depends on the row's
length, so no fixed permutation of positions solves it (x.flip(1) is right only for full rows),
and a position that sees only itself cannot: each position must find the row's end and the
token mirrored around it, which takes attention between positions plus the positional encoding.
"""

import time

import torch
from torch import nn

REVERSAL_PAD = 3  # the course's pad id; 0..3 are the special tokens, never inputs here
REVERSAL_FIRST_TOKEN = 4
# The Encoder's constructor arguments, in order, by their keys in the settings.
ENCODER_ARGS = ("vocab_size", "max_length", "embedding_dim", "feed_forward_dim", "num_heads", "num_layers", "drop_prob")


def reversal_batch(generator, batch_size, max_length, min_length, vocab_size):
    """A batch of the reversal task.

    Args:
        generator: a seeded torch.Generator.
        batch_size: rows.
        max_length: the padded length L.
        min_length: the shortest true length.
        vocab_size: ids REVERSAL_FIRST_TOKEN..vocab_size-1 are the ordinary tokens.

    Returns:
        (inputs, targets): LongTensors (batch, L); padded positions hold REVERSAL_PAD in both.
    """
    inputs = torch.randint(REVERSAL_FIRST_TOKEN, vocab_size, (batch_size, max_length), generator=generator)
    lengths = torch.randint(min_length, max_length + 1, (batch_size,), generator=generator)
    positions = torch.arange(max_length).unsqueeze(0)
    real = positions < lengths.unsqueeze(1)
    inputs = inputs.masked_fill(~real, REVERSAL_PAD)
    mirrored = (lengths.unsqueeze(1) - 1 - positions).clamp(min=0)
    targets = torch.gather(inputs, 1, mirrored).masked_fill(~real, REVERSAL_PAD)
    return inputs, targets


def key_padding_mask(inputs):
    """(B, L) ids -> bool (B, 1, L, L), True where the key is not padding (the course's mask)."""
    length = inputs.size(1)
    return (inputs != REVERSAL_PAD)[:, None, None, :].expand(-1, 1, length, length)


class ReversalModel(nn.Module):
    """The student's Encoder followed by the grader's output head."""

    def __init__(self, encoder, embedding_dim, vocab_size):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(embedding_dim, vocab_size)

    def forward(self, inputs):
        return self.head(self.encoder(inputs, key_padding_mask(inputs)))


def train_and_predict(encoder_class, settings, test_inputs):
    """Train Encoder + head on freshly drawn reversal batches, then predict the test inputs.

    Args:
        encoder_class: the student's Encoder class.
        settings: dict with vocab_size, max_length, min_length, embedding_dim, feed_forward_dim,
            num_heads, num_layers, drop_prob, batch_size, learning_rate, steps, seed, time_budget_s.
        test_inputs: (N, L) ids drawn by the grader (their targets never leave the grader).

    Returns:
        {"predictions": (N, L) argmax ids, "parameters": {name: tensor} of the trained model
         (encoder.* and head.*, registration order), "steps": steps done, "seconds": training
         time, "final_loss": the last batch's loss}.
    """
    started = time.monotonic()
    torch.manual_seed(int(settings["seed"]))
    generator = torch.Generator().manual_seed(int(settings["seed"]) + 1)
    vocab_size = int(settings["vocab_size"])
    encoder = encoder_class(*[int(settings[key]) for key in ENCODER_ARGS[:-1]], float(settings["drop_prob"]))
    model = ReversalModel(encoder, int(settings["embedding_dim"]), vocab_size)
    optimizer = torch.optim.Adam(model.parameters(), lr=float(settings["learning_rate"]))
    total = int(settings["steps"])
    warmup = max(1, total // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / warmup) * max(0.05, 1.0 - step / total)
    )
    criterion = nn.CrossEntropyLoss(ignore_index=REVERSAL_PAD)
    model.train()
    steps, loss_value = 0, float("nan")
    while steps < total:
        steps += 1
        inputs, targets = reversal_batch(
            generator, int(settings["batch_size"]), int(settings["max_length"]), int(settings["min_length"]), vocab_size
        )
        logits = model(inputs)
        loss = criterion(logits.reshape(-1, vocab_size), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        loss_value = float(loss.detach())
        if time.monotonic() - started > float(settings["time_budget_s"]):
            break
    seconds = time.monotonic() - started
    model.eval()
    with torch.no_grad():
        predictions = model(test_inputs).argmax(dim=-1)
    parameters = {name: param.detach().clone() for name, param in model.named_parameters()}
    return {
        "predictions": predictions,
        "parameters": parameters,
        "steps": steps,
        "seconds": seconds,
        "final_loss": loss_value,
    }
