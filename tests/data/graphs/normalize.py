#!/usr/bin/env python3
"""Canonicalises an ADK 2 workflow event stream (JSONL) so two runs can be diffed.

    normalize.py [FILE|-] [--loose]

Pure standard library. Works on ADK 2.13's output
(`event.model_dump_json(exclude_none=True, by_alias=True)`, as scripts/adk2-run.py
prints it) and on `adk-flow run ... --json` alike. Per event:

  * `id`, `timestamp` and `invocationId` are dropped (they differ on every run);
  * function-call ids (`functionCall.id`, `functionResponse.id`, `longRunningToolIds`,
    keys of `actions.requestedAuthConfigs` / `requestedToolConfirmations`) become
    `call:N`, N by order of first appearance, so calls and responses still pair up;
  * the same inside `contents` (the model requests of adk2-run.py --dump-requests),
    where a text part that is a JSON object is also re-dumped with sorted keys (ADK
    orders a JoinNode's mapping by Python set iteration, which varies between runs);
  * everything else is kept verbatim, `nodeInfo` included (its path, outputFor and
    messageAsOutput are what a workflow run is about).

--loose also drops empty maps and lists inside `actions` (ADK always prints stateDelta,
artifactDelta, requestedAuthConfigs and requestedToolConfirmations) and an `actions` left
empty, for comparing with an implementation that leaves empty maps out.

Output: one JSON object per line, keys sorted, compact separators, UTF-8. A line that
is not a JSON object becomes {"__unparsed__": LINE}, so stray stdout shows in a diff.
"""
from __future__ import annotations

import argparse
import json
import sys

DROP = {"id", "timestamp", "invocationId"}
CALL_KEYED = {"requestedAuthConfigs", "requestedToolConfirmations"}


class Calls:
  def __init__(self):
    self.ids: dict[str, str] = {}

  def __call__(self, v):
    if not isinstance(v, str) or not v:
      return v
    return self.ids.setdefault(v, f"call:{len(self.ids) + 1}")


def sorted_json_text(text: str) -> str:
  """A text that is a JSON object, re-dumped with sorted keys; any other text as is.

  A node's mapping input reaches its model as json.dumps text, and ADK builds a
  JoinNode's mapping in Python set order, which changes from run to run.
  """
  try:
    value = json.loads(text)
  except ValueError:
    return text
  if not isinstance(value, dict):
    return text
  return json.dumps(value, sort_keys=True, ensure_ascii=False)


def event(ev: dict, calls: Calls, loose: bool) -> dict:
  out = {k: v for k, v in ev.items() if k not in DROP}
  contents = [out.get("content")]
  if isinstance(out.get("contents"), list):  # a model request (adk2-run.py --dump-requests)
    contents += out["contents"]
    for content in out["contents"]:
      for p in (content or {}).get("parts") or []:
        if isinstance(p, dict) and isinstance(p.get("text"), str):
          p["text"] = sorted_json_text(p["text"])
  for content in contents:
    if not (isinstance(content, dict) and isinstance(content.get("parts"), list)):
      continue
    for p in content["parts"]:
      for key in ("functionCall", "functionResponse"):
        if isinstance(p, dict) and isinstance(p.get(key), dict) and "id" in p[key]:
          p[key]["id"] = calls(p[key]["id"])
  if isinstance(out.get("longRunningToolIds"), list):
    out["longRunningToolIds"] = sorted(calls(x) for x in out["longRunningToolIds"])
  actions = out.get("actions")
  if isinstance(actions, dict):
    for key in CALL_KEYED:
      if isinstance(actions.get(key), dict):
        actions[key] = {calls(k): v for k, v in actions[key].items()}
    if loose:
      actions = {k: v for k, v in actions.items() if v not in ({}, [], None)}
      if actions:
        out["actions"] = actions
      else:
        del out["actions"]
  return out


def normalize_lines(lines, loose=False) -> list[str]:
  calls = Calls()
  out = []
  for raw in lines:
    line = raw.rstrip("\r\n")
    if not line.strip():
      continue
    try:
      obj = json.loads(line)
    except ValueError:
      obj = None
    obj = event(obj, calls, loose) if isinstance(obj, dict) else {"__unparsed__": line}
    out.append(json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
  return out


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description="Canonicalise ADK 2 workflow JSONL events.")
  ap.add_argument("file", nargs="?", default="-")
  ap.add_argument("--loose", action="store_true")
  args = ap.parse_args(argv)
  if args.file == "-":
    lines = sys.stdin.readlines()
  else:
    with open(args.file, encoding="utf-8") as f:
      lines = f.readlines()
  sys.stdout.write("".join(l + "\n" for l in normalize_lines(lines, args.loose)))
  return 0


if __name__ == "__main__":
  sys.exit(main())
