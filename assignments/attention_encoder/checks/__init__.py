"""Hidden checks of Part 1 (attention and the encoder); run by the engine or stand-alone."""
