#!/usr/bin/env python3
"""Regenerates the reference streams of tests/live/*/: what ADK 1.39.1's own
`Runner.run_live` yields and stores for each scenario, for `adk-flow live --script --json`
to be compared with.

    python3 -m venv /tmp/adkref && /tmp/adkref/bin/pip install google-adk==1.39.1 pyyaml
    /tmp/adkref/bin/python scripts/live-adk-reference.py [SCENARIO...]

Each scenario folder holds an ADK Agent Config tree (root_agent.yaml), the scripted replies
(script.yaml, the `--script` format) and the user turns (messages.txt, one per line). ADK's
models are replaced by a scripted live connection with the semantics `adk-flow live`
documents for `--script` (docs/live.md):

- a reply is one model turn, produced when the connection receives a user content, a tool
  response (except those of transfer_to_agent and task_completed, which consume none), or
  history that ends with a user-role content;
- the turn reaches ADK as ADK's own Gemini connection would hand it over: one
  `partial: true` response per text chunk, the merged text (`partial: false`) when the
  text ends (at a function call or at the end of the turn), the function calls, then
  `turn_complete`; `interrupted_after: N` stops after N chunks with the merged text marked
  `interrupted` (the ADK 2.x shape; 1.x drops the flag there, issue #4460) and then
  `turn_complete`; an `error` reply is one error response and ends the turn.

The user turns are sent one at a time: the next line goes into ADK's LiveRequestQueue only
when the previous one has settled (no reply pending and no event for 1.5 s, which covers
ADK's fixed 1 s sleeps at handovers). After the last line the queue is closed; lines left
when the run ends by itself are not sent.

Writes, per scenario: adk.events.jsonl (every event run_live yielded, as
`model_dump_json(exclude_none=True, by_alias=True)`), adk.session.jsonl (the events the
session service stored), and expected.events.jsonl / expected.session.jsonl (both after
tests/golden/normalize.py). Nothing reaches the network.
"""

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import time

import yaml
from google.adk.agents import config_agent_utils
from google.adk.agents.live_request_queue import LiveRequestQueue
from google.adk.agents.run_config import RunConfig
from google.adk.models.base_llm import BaseLlm
from google.adk.models.base_llm_connection import BaseLlmConnection
from google.adk.models.llm_response import LlmResponse
from google.adk.models.registry import LLMRegistry
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types
from websockets.exceptions import ConnectionClosedOK

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
HERE = os.path.join(ROOT, "tests", "live")
NORMALIZE = os.path.join(ROOT, "tests", "golden", "normalize.py")
HANDOVER_TOOLS = {"transfer_to_agent", "task_completed"}
QUIET_SECONDS = 1.5


class Harness:
    replies = {}
    busy = 0
    last_event = 0.0


def text_part(text):
    return types.Part(text=text)


def call_part(c):
    return types.Part(function_call=types.FunctionCall(
        name=c["name"], args=c.get("args", {}), id=c.get("id")))


def turn(reply):
    """The responses ADK's Gemini connection would hand the flow for one scripted reply."""
    if "error" in reply:
        err = reply["error"]
        return [LlmResponse(error_code=err["code"], error_message=err.get("message"))]
    out = []
    if "text" in reply:
        chunks = reply.get("chunks") or [reply["text"]]
        stop = reply.get("interrupted_after")
        if stop is not None:
            said = chunks[:stop]
            for c in said:
                out.append(LlmResponse(content=types.Content(role="model", parts=[text_part(c)]),
                                       partial=True))
            if said:
                out.append(LlmResponse(
                    content=types.Content(role="model", parts=[text_part("".join(said))]),
                    partial=False, interrupted=True))
            else:
                out.append(LlmResponse(interrupted=True))
            out.append(LlmResponse(turn_complete=True))
            return out
        items = [("text", c) for c in chunks]
    elif "function_call" in reply:
        items = [("call", reply["function_call"])]
    elif "function_calls" in reply:
        items = [("call", c) for c in reply["function_calls"]]
    else:
        items = [("text", p["text"]) if "text" in p else ("call", p["function_call"])
                 for p in reply["parts"]]
    text = ""
    calls = []
    for kind, value in items:
        if kind == "text":
            text += value
            out.append(LlmResponse(content=types.Content(role="model", parts=[text_part(value)]),
                                   partial=True))
        else:
            if text:
                out.append(LlmResponse(content=types.Content(role="model",
                                                             parts=[text_part(text)]),
                                       partial=False))
                text = ""
            calls.append(call_part(value))
    if text:
        out.append(LlmResponse(content=types.Content(role="model", parts=[text_part(text)]),
                               partial=False))
    if calls:
        out.append(LlmResponse(content=types.Content(role="model", parts=calls)))
    out.append(LlmResponse(turn_complete=True))
    return out


CLOSED = object()


class ScriptedConnection(BaseLlmConnection):
    def __init__(self, agent):
        self.agent = agent
        self.out = asyncio.Queue()
        self.open_turns = 0

    def _trigger(self):
        replies = Harness.replies.get(self.agent, [])
        if not replies:
            raise RuntimeError(f"script exhausted for {self.agent}")
        Harness.busy += 1
        self.open_turns += 1
        for r in turn(replies.pop(0)):
            self.out.put_nowait(r)

    async def send_history(self, history):
        if history and history[-1].role == "user":
            self._trigger()

    async def send_content(self, content):
        names = {p.function_response.name for p in content.parts if p.function_response}
        if names and names & HANDOVER_TOOLS:
            return
        self._trigger()

    async def send_realtime(self, blob):
        pass

    async def receive(self):
        while True:
            item = await self.out.get()
            if item is CLOSED:
                raise ConnectionClosedOK(None, None)
            ends = bool(item.turn_complete or item.error_code)
            if ends:
                Harness.busy -= 1
                self.open_turns -= 1
            yield item
            if item.turn_complete:
                return

    async def close(self):
        # A handover closes the connection before the rest of its turn was read.
        Harness.busy -= self.open_turns
        self.open_turns = 0
        self.out.put_nowait(CLOSED)


class ScriptedLive(BaseLlm):
    @classmethod
    def supported_models(cls):
        return [r"gemini-.*"]

    async def generate_content_async(self, llm_request, stream=False):
        raise NotImplementedError("live only")
        yield  # pragma: no cover

    @contextlib.asynccontextmanager
    async def connect(self, llm_request):
        si = llm_request.config.system_instruction or ""
        agent = re.search(r'Your internal name is "([^"]+)"', si).group(1)
        conn = ScriptedConnection(agent)
        try:
            yield conn
        finally:
            await conn.close()


async def settle():
    while True:
        await asyncio.sleep(0.05)
        quiet = time.monotonic() - Harness.last_event
        if Harness.busy == 0 and quiet >= QUIET_SECONDS:
            return


async def run_scenario(name):
    folder = os.path.join(HERE, name)
    script = yaml.safe_load(open(os.path.join(folder, "script.yaml"), encoding="utf-8"))
    Harness.replies = {k: list(v) for k, v in script.get("replies", {}).items()}
    Harness.busy = 0
    Harness.last_event = time.monotonic()
    lines = [l.rstrip("\n") for l in open(os.path.join(folder, "messages.txt"), encoding="utf-8")]
    root = config_agent_utils.from_config(os.path.join(folder, "root_agent.yaml"))
    service = InMemorySessionService()
    runner = Runner(app_name=root.name, agent=root, session_service=service)
    session = await service.create_session(app_name=root.name, user_id="user", session_id="s")
    queue = LiveRequestQueue()
    events = []
    done = asyncio.Event()

    async def consume():
        try:
            async for event in runner.run_live(user_id="user", session_id="s",
                                               live_request_queue=queue,
                                               run_config=RunConfig(response_modalities=["TEXT"])):
                events.append(event.model_dump_json(exclude_none=True, by_alias=True))
                Harness.last_event = time.monotonic()
        except ConnectionClosedOK:
            pass  # ADK 1.x surfaces the close of the queue as this error
        finally:
            done.set()

    task = asyncio.create_task(consume())
    for line in lines:
        if done.is_set():
            break
        queue.send_content(types.Content(role="user", parts=[types.Part(text=line)]))
        Harness.last_event = time.monotonic()
        await asyncio.wait([asyncio.create_task(settle()), asyncio.create_task(done.wait())],
                           return_when=asyncio.FIRST_COMPLETED)
    queue.close()
    await asyncio.wait_for(task, 10)
    stored = await service.get_session(app_name=root.name, user_id="user", session_id="s")
    stored_lines = [e.model_dump_json(exclude_none=True, by_alias=True) for e in stored.events]
    write(folder, "adk.events.jsonl", events)
    write(folder, "adk.session.jsonl", stored_lines)
    normalize(folder, "adk.events.jsonl", "expected.events.jsonl")
    normalize(folder, "adk.session.jsonl", "expected.session.jsonl")
    print(f"{name}: {len(events)} events yielded, {len(stored_lines)} stored")


def write(folder, name, lines):
    with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")


def normalize(folder, src, dst):
    with open(os.path.join(folder, src), "rb") as f:
        out = subprocess.run([sys.executable, NORMALIZE, "-"], stdin=f, check=True,
                             capture_output=True).stdout
    with open(os.path.join(folder, dst), "wb") as f:
        f.write(out)


async def main(names):
    LLMRegistry._register(r"gemini-.*", ScriptedLive)
    names = names or sorted(d for d in os.listdir(HERE)
                            if os.path.isdir(os.path.join(HERE, d)))
    for name in names:
        await run_scenario(name)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
