"""Assignment-agnostic helpers of hidden checks (seeded cases, comparison, transplant) and the runner plugin name."""
