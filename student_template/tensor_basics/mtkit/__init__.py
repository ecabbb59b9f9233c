"""Public toolkit for the assignment (data, batching, training loop, greedy translation, BLEU); no solutions."""
