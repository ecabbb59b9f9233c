"""Code run inside the sandboxed worker, imported there as `worker_runtime` (stdlib, torch, safetensors only)."""
