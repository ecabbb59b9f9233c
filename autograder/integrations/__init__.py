"""Front ends around the engine: GitHub Actions (student and instructor workflows) and Gradescope."""
