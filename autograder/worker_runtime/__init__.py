"""Code that runs inside the sandboxed worker process; copied out and imported there as `worker_runtime` (stdlib, torch and safetensors only)."""
