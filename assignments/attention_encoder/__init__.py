"""Part 1 of the course: scaled dot-product attention, multi-head attention and the encoder."""
