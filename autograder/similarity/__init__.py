"""Similarity between submissions: what students wrote, compared by winnowed fingerprints."""
