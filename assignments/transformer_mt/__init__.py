"""The Transformer German-English translation assignment (master notebook and its build)."""
