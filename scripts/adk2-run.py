#!/usr/bin/env python3
"""Runs an ADK 2 Workflow YAML file in google-adk 2.13.0 itself, with scripted model
replies, and prints its events as `adk-flow run WORKFLOW --script SCRIPT --json` would.

    python="$(scripts/adk2.sh)"     # a venv with google-adk 2.13.0 and adk_flow
    "$python" scripts/adk2-run.py WORKFLOW.yaml --script SCRIPT.yaml \\
        --message "first turn" [--message "second turn" ...] [--session-out FILE]

ADK loads the file with its own YAML loader (`config_agent_utils.from_config`), so
`agent_class: adk_flow.Router` and the `adk_flow.set_route` tool resolve through the
`adk_flow` package of this checkout (python/, put first on `sys.path`). Every LLM agent of the tree gets a
scripted model that serves the replies of SCRIPT (adk-flow's `--script` format:
`replies: {AGENT: [reply, ...]}`, each reply `text`, `function_call`, `function_calls`,
`parts` or `error`) for its own name, in order; an agent with no reply left is an error
of this script (exit 2), never a silent success.

All messages are sent in one in-memory session, one user turn each, non-resumable and
without streaming. Each event the runner yields is printed on stdout as
`event.model_dump_json(exclude_none=True, by_alias=True)`, one per line, and nothing else
goes to stdout; ADK's warnings go to stderr. When a turn fails (a node raised, so its
workflow failed), later messages are not sent and the exit status is 1, as adk-flow does.
`--session-out FILE` writes the stored session's events the same way;
`--dump-requests FILE` writes what each model call was asked, one JSON object a line:
`{"agent", "contents", "systemInstruction", "tools"}` (contents as ADK's Content JSON,
tools by name), like adk-flow's `--dump-requests`. Nothing reaches the network.
"""

import argparse
import asyncio
import json
import logging
import os
import sys

import yaml
from google.adk.agents import config_agent_utils
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.agent_tool import AgentTool
from google.adk.workflow._base_node import _walk_static_nodes
from google.genai import types

# `adk_flow` from this checkout's python/, ahead of whatever the venv has installed
# (scripts/adk2.sh installs it editable from the checkout that ran it first; another
# checkout sharing the venv must still run its own).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))

APP = "adk_flow"
USER = "user"


class ScriptExhausted(Exception):
    """An agent asked for more replies than the script has."""


def part(p):
    if "text" in p:
        return types.Part(text=p["text"])
    c = p["function_call"]
    return types.Part(function_call=types.FunctionCall(
        name=c["name"], args=c.get("args", {}), id=c.get("id")))


def response(reply):
    """The LlmResponse ADK's Gemini client would hand over for one scripted reply."""
    if "error" in reply:
        err = reply["error"]
        return LlmResponse(error_code=err["code"], error_message=err.get("message"))
    if "parts" in reply:
        parts = [part(p) for p in reply["parts"]]
    elif "function_calls" in reply:
        parts = [part({"function_call": c}) for c in reply["function_calls"]]
    else:
        parts = [part(reply)]
    return LlmResponse(content=types.Content(role="model", parts=parts))


REQUESTS = []


def request_json(agent, llm_request):
    """What the model was asked: the agent, its contents and its system instruction."""
    out = {"agent": agent, "contents": [
        c.model_dump(mode="json", exclude_none=True, by_alias=True)
        for c in llm_request.contents]}
    si = llm_request.config.system_instruction if llm_request.config else None
    if si:
        out["systemInstruction"] = si if isinstance(si, str) else str(si)
    config_tools = (llm_request.config.tools if llm_request.config else None) or []
    tools = [d.name for t in config_tools
             for d in (getattr(t, "function_declarations", None) or [])]
    if tools:
        out["tools"] = tools
    return out


class ScriptedModel(BaseLlm):
    """Serves one agent's scripted replies, in order."""

    agent: str
    replies: list

    async def generate_content_async(self, llm_request, stream=False):
        REQUESTS.append(request_json(self.agent, llm_request))
        if not self.replies:
            raise ScriptExhausted(f"the script has no reply left for agent {self.agent!r}")
        yield response(self.replies.pop(0))


def script_models(root, script):
    """Gives every LLM agent of the tree its scripted model, those called through an
    AgentTool (and their sub-agents) included."""
    replies = {k: list(v) for k, v in (script.get("replies") or {}).items()}
    todo = [root]
    while todo:
        for node in _walk_static_nodes(todo.pop()):
            if isinstance(node, LlmAgent):
                node.model = ScriptedModel(model="scripted", agent=node.name,
                                           replies=replies.setdefault(node.name, []))
                todo += [t.agent for t in node.tools if isinstance(t, AgentTool)]


def dump(event):
    return event.model_dump_json(exclude_none=True, by_alias=True)


async def run(args):
    script = yaml.safe_load(open(args.script, encoding="utf-8")) if args.script else {}
    try:
        root = config_agent_utils.from_config(args.workflow)
    except Exception as e:  # ADK refused the file: exit 1, nothing on stdout
        print(f"adk2-run.py: {args.workflow}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    script_models(root, script or {})
    sessions = InMemorySessionService()
    runner = Runner(app_name=APP, node=root, session_service=sessions)
    session = await sessions.create_session(app_name=APP, user_id=USER)
    status = 0
    for message in args.message:
        content = types.Content(role="user", parts=[types.Part(text=message)])
        try:
            async for event in runner.run_async(user_id=USER, session_id=session.id,
                                                new_message=content, run_config=RunConfig()):
                print(dump(event), flush=True)
        except ScriptExhausted:
            raise
        except Exception as e:  # ADK re-raises what failed the root workflow
            print(f"adk2-run.py: the turn failed: {type(e).__name__}: {e}", file=sys.stderr)
            status = 1
            break
    if args.dump_requests:
        with open(args.dump_requests, "w", encoding="utf-8") as f:
            for r in REQUESTS:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    if args.session_out:
        stored = await sessions.get_session(app_name=APP, user_id=USER, session_id=session.id)
        with open(args.session_out, "w", encoding="utf-8") as f:
            for event in stored.events:
                f.write(dump(event) + "\n")
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workflow")
    ap.add_argument("--script")
    ap.add_argument("--message", action="append", default=[])
    ap.add_argument("--session-out")
    ap.add_argument("--dump-requests")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        return asyncio.run(run(args))
    except ScriptExhausted as e:
        print(f"adk2-run.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
