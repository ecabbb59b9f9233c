"""Trusted reference of Part 2 (the decoder side and translation): model, masks, loss, training, decoding."""
