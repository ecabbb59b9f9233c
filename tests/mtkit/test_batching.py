"""Tests for mtkit.batching: bucketing determinism and coverage, max_tokens, padding shapes/values."""

import random

import pytest
import torch

from mtkit.batching import bucket_batches, fixed_pad_pair_batch, pad_pair_batch, random_batches
from mtkit.constants import PAD_IDX

_RNG = random.Random(7)
LENGTHS = [_RNG.randint(3, 40) for _ in range(1000)]


def test_every_index_once_and_sizes():
    batches = bucket_batches(LENGTHS, batch_size=32, pool_size=200, seed=0)
    assert sorted(i for batch in batches for i in batch) == list(range(1000))
    # 5 pools of 200 -> per pool 6 full batches and one of 8.
    assert sorted(len(batch) for batch in batches) == [8] * 5 + [32] * 30


def test_deterministic_for_seed_and_different_across_seeds():
    first = bucket_batches(LENGTHS, 32, pool_size=200, seed=3)
    assert first == bucket_batches(LENGTHS, 32, pool_size=200, seed=3)
    assert first != bucket_batches(LENGTHS, 32, pool_size=200, seed=4)
    state = random.getstate()
    bucket_batches(LENGTHS, 32, seed=5)
    assert random.getstate() == state  # the global generator is untouched


def test_batches_are_length_homogeneous():
    def mean_spread(batches):
        return sum(max(LENGTHS[i] for i in b) - min(LENGTHS[i] for i in b) for b in batches) / len(batches)

    bucketed = bucket_batches(LENGTHS, 32, pool_size=1000, seed=0)
    # With one pool sorted globally, consecutive batches cover disjoint length ranges.
    assert mean_spread(bucketed) <= 2
    assert mean_spread(random_batches(1000, 32, seed=0)) > 25
    within = [sorted(LENGTHS[i] for i in batch) == [LENGTHS[i] for i in batch] for batch in bucketed]
    assert all(within)


def test_drop_last_and_bad_arguments():
    batches = bucket_batches(LENGTHS, 32, pool_size=200, seed=0, drop_last=True)
    assert all(len(batch) == 32 for batch in batches) and len(batches) == 30
    with pytest.raises(ValueError):
        bucket_batches(LENGTHS, batch_size=0)
    with pytest.raises(ValueError):
        bucket_batches(LENGTHS, batch_size=None)
    assert bucket_batches([], 4) == []


def test_max_tokens_mode():
    lengths = [2, 9, 3, 3, 4, 10, 2]
    batches = bucket_batches(lengths, batch_size=None, pool_size=100, seed=1, max_tokens=9)
    assert sorted(i for batch in batches for i in batch) == list(range(7))
    for batch in batches:
        longest = max(lengths[i] for i in batch)
        assert len(batch) * longest <= 9 or len(batch) == 1  # a too-long sentence stays alone
    # Sorted lengths 2 2 3 3 4 9 10: [2 2 3] (9 tokens), [3 4] (8), [9], [10].
    assert sorted(sorted(lengths[i] for i in b) for b in batches) == [[2, 2, 3], [3, 4], [9], [10]]
    capped = bucket_batches([1] * 10, batch_size=4, seed=0, max_tokens=100)
    assert sorted(map(len, capped)) == [2, 4, 4]


def test_pad_pair_batch_common_length():
    src, tgt = pad_pair_batch([[1, 5, 2], [1, 6, 7, 8, 2]], [[1, 9, 9, 9, 9, 9, 2], [1, 2]], pad_idx=PAD_IDX)
    assert src.shape == tgt.shape == (2, 7) and src.dtype == tgt.dtype == torch.long
    assert src.tolist() == [[1, 5, 2, 3, 3, 3, 3], [1, 6, 7, 8, 2, 3, 3]]
    assert tgt.tolist() == [[1, 9, 9, 9, 9, 9, 2], [1, 2, 3, 3, 3, 3, 3]]
    src, tgt = pad_pair_batch([[1, 2]], [[1, 2]], pad_idx=0, min_length=4)
    assert src.tolist() == tgt.tolist() == [[1, 2, 0, 0]]
    with pytest.raises(ValueError):
        pad_pair_batch([[1]], [[1], [2]])
    with pytest.raises(ValueError):
        pad_pair_batch([], [])


def test_fixed_pad_pair_batch():
    src, tgt = fixed_pad_pair_batch([[1, 4, 2]], [[1, 2]], length=6)
    assert src.tolist() == [[1, 4, 2, 3, 3, 3]] and tgt.tolist() == [[1, 2, 3, 3, 3, 3]]
    assert fixed_pad_pair_batch([[1, 2]] * 3, [[1, 2]] * 3)[0].shape == (3, 50)
    with pytest.raises(ValueError, match="does not fit"):
        fixed_pad_pair_batch([[1] * 7], [[1]], length=6)
