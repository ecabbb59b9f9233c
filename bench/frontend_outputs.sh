#!/usr/bin/env bash
# Write every front end's output for the example notebooks into OUT (default: frontend-outputs/), with
# the run-dependent parts (timings, dates, paths of the temporary folders) masked, so that two trees can
# be compared byte for byte: bench/frontend_outputs.sh /tmp/a && (other tree) ... /tmp/b && diff -r /tmp/a /tmp/b
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$(realpath -m "${1:-frontend-outputs}")
PY=$(realpath -s "${PY:-.venv/bin/python}")
# This tree's code, whichever environment runs it (also from the temporary folder of the public checks).
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export MULTI30K_DIR="${MULTI30K_DIR:-$(cd .. && pwd)/shared/data/multi30k}"
rm -rf "$OUT" && mkdir -p "$OUT"
for lang in ko en; do
  "$PY" -m autograder grade examples/*.ipynb --language "$lang" --out "$OUT/cli-$lang" --jobs 1 --quiet
  "$PY" -m autograder grade examples/*.ipynb --language "$lang" --out "$OUT/cli-json-$lang" --jobs 1 --json \
    > "$OUT/cli-$lang.stdout.json" 2> /dev/null
  "$PY" -m autograder grade assignments/attention_encoder/attention_encoder.ipynb --assignment attention_encoder \
    --language "$lang" --out "$OUT/part1-$lang" --jobs 1 --quiet
  # the class view, from each batch's stored results
  "$PY" -m autograder report "$OUT/cli-$lang" --class 2> /dev/null
  "$PY" -m autograder report "$OUT/part1-$lang" --class 2> /dev/null
done
# Gradescope: the container's route, with a submission folder and a results path of our own.
SUB=$(mktemp -d) && cp examples/correct_original_format.ipynb "$SUB/" && mkdir -p "$OUT/gradescope"
"$PY" -m autograder.integrations.gradescope.run --submission-dir "$SUB" --results "$OUT/gradescope/results.json" \
  > "$OUT/gradescope/stdout.txt"
rm -rf "$SUB"
# Public checks, as the student workflow runs them (on a copy of an example beside the public tests).
PUB=$(mktemp -d) && cp -r student_template/tests "$PUB/tests" && cp examples/buggy_original_format.ipynb "$PUB/"
ROOT=$PWD
for lang in ko en; do
  (cd "$PUB" && "$PY" -m autograder public-checks --tests tests --language "$lang" --out "$OUT/public-checks-$lang" \
    > "$OUT/public-checks-$lang.stdout.txt" 2>&1 || true)
done
rm -rf "$PUB"
# Masks: durations, times of day, dates and temporary paths differ from run to run; inputs_sha256
# hashes the engine's own files, so it changes with any code change. The gradebook's last column is its
# grading_seconds (a number after `graded,`).
find "$OUT" -type f \( -name '*.json' -o -name '*.md' -o -name '*.csv' -o -name '*.txt' -o -name '*.html' \) -print0 |
  xargs -0 sed -i -E \
    -e 's/"(seconds|grading_seconds|stored_at|inputs_sha256|duration_s|elapsed_s|wall_s|cpu_s|execution_time|graded_at|started_at|finished_at)": *[^,}]*/"\1": "<masked>"/g' \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.+Z-]+/<time>/g' \
    -e 's#/tmp/[A-Za-z0-9._/-]+#<tmp>#g' \
    -e 's/[0-9]+(\.[0-9]+)? ?s\b/<secs>/g' \
    -e 's/,graded,[0-9.]+$/,graded,<secs>/'
echo "written: $OUT"
