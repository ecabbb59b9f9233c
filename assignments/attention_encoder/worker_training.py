"""Worker side of Part 1's training part (filled in below)."""
