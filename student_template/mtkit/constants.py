"""Fixed constants of the assignment: languages, special tokens and their indices, max length."""

SRC_LANGUAGE: str = "de"
TGT_LANGUAGE: str = "en"

# Indices of the special tokens; they are the first four vocabulary entries, in this order.
UNK_IDX, SOS_IDX, EOS_IDX, PAD_IDX = 0, 1, 2, 3
SPECIALS: list[str] = ["<unk>", "<sos>", "<eos>", "<pad>"]

# Sentences whose token list, including <sos>/<eos>, is longer than this are dropped (train).
DEFAULT_MAX_LENGTH: int = 50

# Length-bucketing pool (mtkit.batching): indices shuffled together, then sorted by length; large
# enough that batches are nearly uniform in length, small enough that each epoch's batches differ.
DEFAULT_POOL_SIZE: int = 6400
