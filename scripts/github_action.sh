#!/usr/bin/env bash
# The step of the GitHub Action (action.yml): install the tool into its own venv, export every path
# with --report/--junit/--sarif into the output folder, set the step's outputs (exit code, file paths).
# The job summary and the annotations come from the tool itself (GITHUB_ACTIONS is set).
# Inputs arrive as MTOK_* variables (action.yml); MTOK_EXPORT_BIN names an installed mtok-export
# instead (tests/acceptance/test_action.py runs this script with a fake GITHUB_* environment).
set -uo pipefail
out="${MTOK_OUTPUT_DIR:-mtok-out}"
mkdir -p "$out"
bin="${MTOK_EXPORT_BIN:-}"
if [ -z "$bin" ]; then
    venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/mtok-export-venv"
    python3 -m venv "$venv" || exit 2
    "$venv/bin/pip" install -q --disable-pip-version-check "${MTOK_INSTALL:-${GITHUB_ACTION_PATH:?}[references]}" || exit 2
    bin="$venv/bin/mtok-export"
fi
read -r -d '' -a paths <<<"${MTOK_PATHS:-}"
if [ "${#paths[@]}" -eq 0 ]; then
    echo "::error title=mtok-export::the action's input 'paths' is empty"
    exit 2
fi
read -r -d '' -a more <<<"${MTOK_ARGS:-}"
args=(--output "$out" --report "$out/report.json" --junit "$out/junit.xml" --sarif "$out/results.sarif"
      --summary "$out/summary.md")
[ -n "${MTOK_TARGET:-}" ] && args+=(--target "$MTOK_TARGET")
[ -n "${MTOK_ACCEPT_FILE:-}" ] && args+=(--accept-file "$MTOK_ACCEPT_FILE")
code=0
"$bin" --path "${paths[@]}" "${args[@]}" "${more[@]}" || code=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
        echo "exit-code=$code"
        echo "report=$out/report.json"
        echo "junit=$out/junit.xml"
        echo "sarif=$out/results.sarif"
        echo "summary=$out/summary.md"
        echo "output-dir=$out"
    } >>"$GITHUB_OUTPUT"
fi
if [ "${MTOK_FAIL_ON_ERROR:-true}" = "true" ]; then
    exit "$code"
fi
