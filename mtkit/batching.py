"""Length-bucketed batch sampling and padding of (source, target) batches to one common length."""

from __future__ import annotations

import random
from collections.abc import Sequence

import torch

from mtkit.constants import DEFAULT_MAX_LENGTH, DEFAULT_POOL_SIZE, PAD_IDX


def _cut_by_count(pool: list[int], batch_size: int) -> list[list[int]]:
    return [pool[start : start + batch_size] for start in range(0, len(pool), batch_size)]


def _cut_by_tokens(pool: list[int], lengths: Sequence[int], max_tokens: int, batch_size: int | None) -> list[list[int]]:
    """Cut a length-sorted pool so that rows * longest row stays within max_tokens."""
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in pool:
        grown_longest = max(longest, lengths[index])
        too_many_tokens = (len(current) + 1) * grown_longest > max_tokens
        too_many_rows = batch_size is not None and len(current) >= batch_size
        if current and (too_many_tokens or too_many_rows):
            batches.append(current)
            current, grown_longest = [], lengths[index]
        current.append(index)
        longest = grown_longest
    if current:
        batches.append(current)  # a single sequence longer than max_tokens still gets a batch
    return batches


def bucket_batches(
    lengths: Sequence[int],
    batch_size: int | None = 128,
    pool_size: int = DEFAULT_POOL_SIZE,
    seed: int = 0,
    max_tokens: int | None = None,
    drop_last: bool = False,
) -> list[list[int]]:
    """Group example indices into batches of similar length; deterministic for a given seed.

    Shuffle all indices, split them into pools of `pool_size`, sort each pool by length (stable,
    so equal lengths keep their shuffled order), cut each pool into batches, then shuffle the
    order of all batches.

    Args:
        lengths: length of each example (e.g. max of source and target length).
        batch_size: sentences per batch (the last batch of a pool may be smaller); with
            `max_tokens` an optional cap on rows, else required.
        pool_size: indices sorted together; 1 gives random batches, len(lengths) a global sort.
        seed: seed of the private random generator (the global one is not touched).
        max_tokens: if set, cut batches so that rows * longest row <= max_tokens (padded tokens).
        drop_last: drop batches with fewer than batch_size rows (count mode only).

    Returns:
        A list of batches, each a list of indices into `lengths`; every index appears once
        (unless dropped by drop_last).
    """
    if max_tokens is None and (batch_size is None or batch_size < 1):
        raise ValueError("batch_size must be a positive integer when max_tokens is not given")
    if max_tokens is not None and max_tokens < 1:
        raise ValueError("max_tokens must be a positive integer")
    if pool_size < 1:
        raise ValueError("pool_size must be a positive integer")
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    batches: list[list[int]] = []
    for start in range(0, len(order), pool_size):
        pool = sorted(order[start : start + pool_size], key=lengths.__getitem__)
        if max_tokens is None:
            assert batch_size is not None
            batches.extend(_cut_by_count(pool, batch_size))
        else:
            batches.extend(_cut_by_tokens(pool, lengths, max_tokens, batch_size))
    if drop_last and max_tokens is None:
        batches = [batch for batch in batches if len(batch) == batch_size]
    rng.shuffle(batches)
    return batches


def random_batches(count: int, batch_size: int, seed: int = 0, drop_last: bool = False) -> list[list[int]]:
    """Plain shuffled batches (no length sorting), for comparison with `bucket_batches`.

    Args:
        count: number of examples.
        batch_size: rows per batch (the last batch may be smaller).
        seed: seed of the private random generator.
        drop_last: drop a final smaller batch.

    Returns:
        A list of batches of example indices.
    """
    return bucket_batches([0] * count, batch_size, pool_size=max(count, 1), seed=seed, drop_last=drop_last)


def _fill(rows: Sequence[Sequence[int]], length: int, pad_idx: int) -> torch.Tensor:
    """Copy variable-length rows into a (len(rows), length) long tensor filled with pad_idx."""
    # Padding the Python lists first and converting once is faster than B row copies.
    padded = [list(sequence) + [pad_idx] * (length - len(sequence)) for sequence in rows]
    return torch.tensor(padded, dtype=torch.long)  # (B, L)


def _check_pair_rows(src_seqs: Sequence[Sequence[int]], tgt_seqs: Sequence[Sequence[int]]) -> None:
    if len(src_seqs) != len(tgt_seqs):
        raise ValueError(f"src and tgt batches differ in size: {len(src_seqs)} vs {len(tgt_seqs)}")
    if len(src_seqs) == 0:
        raise ValueError("cannot pad an empty batch")


def pad_pair_batch(
    src_seqs: Sequence[Sequence[int]], tgt_seqs: Sequence[Sequence[int]], pad_idx: int = PAD_IDX, min_length: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad a batch of source and target id sequences to ONE common length.

    The assignment's MultiHeadAttention reshapes keys with the query's length, so the encoder
    output (source length) and the decoder input (target length) must have equal lengths.

    Args:
        src_seqs: B source id sequences (with <sos>/<eos>).
        tgt_seqs: B target id sequences (with <sos>/<eos>).
        pad_idx: index written into padding positions.
        min_length: lower bound for the common length.

    Returns:
        (src, tgt): long tensors of shape (B, L), L = max(min_length, longest sequence of
        either side).
    """
    _check_pair_rows(src_seqs, tgt_seqs)
    length = max(min_length, max(map(len, src_seqs)), max(map(len, tgt_seqs)))
    return _fill(src_seqs, length, pad_idx), _fill(tgt_seqs, length, pad_idx)  # (B, L), (B, L)


def fixed_pad_pair_batch(
    src_seqs: Sequence[Sequence[int]],
    tgt_seqs: Sequence[Sequence[int]],
    pad_idx: int = PAD_IDX,
    length: int = DEFAULT_MAX_LENGTH,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad every sequence to a fixed length, as the original notebook does (benchmark baseline).

    Args:
        src_seqs: B source id sequences.
        tgt_seqs: B target id sequences.
        pad_idx: index written into padding positions.
        length: the fixed length (the assignment's max_length).

    Returns:
        (src, tgt): long tensors of shape (B, length).

    Raises:
        ValueError: a sequence is longer than `length` (it would have to be truncated).
    """
    _check_pair_rows(src_seqs, tgt_seqs)
    longest = max(max(map(len, src_seqs)), max(map(len, tgt_seqs)))
    if longest > length:
        raise ValueError(f"a sequence of length {longest} does not fit the fixed length {length}")
    return _fill(src_seqs, length, pad_idx), _fill(tgt_seqs, length, pad_idx)  # (B, length) each
