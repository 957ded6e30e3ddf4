#!/usr/bin/env python3
"""Records the reference streams of tests/data/graphs/*/ from google-adk 2.13.0 itself.

    python="$(scripts/adk2.sh)"
    "$python" scripts/adk2-record.py [CASE ...]     # default: every case folder

A case folder holds a workflow (`root_agent.yaml` and the files it names), the scripted
replies (`script.yaml`, adk-flow's `--script` format) and the user turns (`messages.txt`,
one per line). For each, scripts/adk2-run.py runs the workflow in ADK 2.13 and this writes:

- `adk.events.jsonl`: the events the runner yielded, exactly as ADK printed them;
- `adk.session.jsonl`: the events the session service stored;
- `adk.requests.jsonl`: what each model call was asked (agent, contents, system
  instruction, tool names);
- `expected.events.jsonl`, `expected.session.jsonl`, `expected.requests.jsonl`: the three after
  tests/data/graphs/normalize.py (ids, timestamps and invocationId dropped, call ids
  numbered);
- `expected.exit`: the exit status (0, or 1 when a node failed and the run stopped);
- `adk.warnings.txt`: the first line of each warning or error ADK's workflow code logged
  (a route that matched no edge, a node that failed), empty when there were none.

Nothing reaches the network.
"""

import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CASES = os.path.join(ROOT, "tests", "data", "graphs")
RUN = os.path.join(ROOT, "scripts", "adk2-run.py")
sys.path.insert(0, CASES)
from normalize import normalize_lines  # noqa: E402


def messages(case):
    with open(os.path.join(case, "messages.txt"), encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def record(case):
    args = [sys.executable, RUN, os.path.join(case, "root_agent.yaml"),
            "--script", os.path.join(case, "script.yaml"),
            "--session-out", os.path.join(case, "adk.session.jsonl"),
            "--dump-requests", os.path.join(case, "adk.requests.jsonl")]
    for m in messages(case):
        args += ["--message", m]
    proc = subprocess.run(args, capture_output=True, text=True, cwd=case)
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"{case}: adk2-run.py exited {proc.returncode}")
    with open(os.path.join(case, "adk.events.jsonl"), "w", encoding="utf-8") as f:
        f.write(proc.stdout)
    warnings = [line for line in proc.stderr.splitlines()
                if line.startswith(("WARNING:google_adk.google.adk.workflow",
                                    "ERROR:google_adk.google.adk.workflow"))
                and "Traceback" not in line]
    with open(os.path.join(case, "adk.warnings.txt"), "w", encoding="utf-8") as f:
        f.write("".join(w + "\n" for w in warnings))
    for kind in ("events", "session", "requests"):
        with open(os.path.join(case, f"adk.{kind}.jsonl"), encoding="utf-8") as f:
            lines = normalize_lines(f.readlines())
        with open(os.path.join(case, f"expected.{kind}.jsonl"), "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
    with open(os.path.join(case, "expected.exit"), "w", encoding="utf-8") as f:
        f.write(f"{proc.returncode}\n")
    print(f"{os.path.basename(case)}: {len(proc.stdout.splitlines())} events, "
          f"exit {proc.returncode}, {len(warnings)} warnings")


def main():
    names = sys.argv[1:] or sorted(
        d for d in os.listdir(CASES) if os.path.isfile(os.path.join(CASES, d, "root_agent.yaml")))
    for name in names:
        record(os.path.join(CASES, name))


if __name__ == "__main__":
    main()
