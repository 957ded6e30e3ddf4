"""Tests of adk_flow inside google-adk 2.13 (run: python -m unittest discover python/tests).

They load workflows through ADK's own YAML loader and run them with ADK's Runner, so
they need the venv of scripts/adk2.sh; no model is called.
"""

import asyncio
import json
import logging
import os
import tempfile
import unittest

from google.adk.agents import config_agent_utils
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools.function_tool import FunctionTool
from google.adk.workflow._base_node import _walk_static_nodes
from google.genai import types

import adk_flow


def setUpModule():
  # ADK logs every node failure with its traceback; the tests check them as values.
  logging.disable(logging.CRITICAL)


def load(yaml_text):
  with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "root_agent.yaml")
    with open(path, "w", encoding="utf-8") as f:
      f.write(yaml_text)
    return config_agent_utils.from_config(path)


def router_workflow(**router):
  """A workflow [START, r] with Router r of these keys, as YAML (JSON is YAML)."""
  node = {"name": "r", "agent_class": "adk_flow.Router", **router}
  return json.dumps({"agent_class": "Workflow", "name": "wf", "edges": [["START", node]]})


async def _run(root, messages, state=None):
  sessions = InMemorySessionService()
  runner = Runner(app_name="t", node=root, session_service=sessions)
  session = await sessions.create_session(app_name="t", user_id="u", state=state)
  events, error = [], None
  for m in messages:
    try:
      async for e in runner.run_async(
          user_id="u", session_id=session.id,
          new_message=types.Content(role="user", parts=[types.Part(text=m)])):
        events.append(e)
    except Exception as e:  # the failure ADK re-raises after the error event
      error = e
      break
  return events, error


def run(root, *messages, state=None):
  return asyncio.run(_run(root, list(messages), state))


class RouterLoads(unittest.TestCase):

  def test_loads_as_agent_class_and_keeps_its_keys(self):
    root = load(router_workflow(route="'a'", output="input", state={"n": "1"}))
    (node,) = [n for n in _walk_static_nodes(root) if n.name == "r"]
    self.assertIsInstance(node, adk_flow.Router)
    self.assertEqual((node.route, node.output, node.state), ("'a'", "input", {"n": "1"}))

  def test_refused_at_load(self):
    bad = {
        "syntax": {"route": "1 +"},
        "method call": {"route": "input.split()"},
        "unknown filter": {"route": "input | replace('a', 'b')"},
        "unknown test": {"route": "input is string"},
        "non-string state": {"route": "1", "state": {"n": 0}},
        "non-string route": {"route": 1},
        "unknown key": {"route": "1", "colour": "red"},
        "no route": {},
    }
    for what, keys in bad.items():
      with self.subTest(what), self.assertRaises(Exception):
        load(router_workflow(**keys))


class RouterRuns(unittest.TestCase):

  def test_one_event_with_route_output_and_state(self):
    root = load(router_workflow(
        route="['a', 1] if 'x' in input else none",
        output="{'said': input, 'n': state.n | default(0)}",
        state={"n": "(state.n | default(0)) + 1", "m": "state.n | default('none')"}))
    events, error = run(root, "x marks", "plain")
    self.assertIsNone(error)
    self.assertEqual(len(events), 2)
    first, second = events
    self.assertEqual(first.author, "wf")
    self.assertEqual(first.actions.route, ["a", 1])
    self.assertEqual(first.output, {"said": "x marks", "n": 0})
    self.assertEqual(first.actions.state_delta, {"n": 1, "m": "none"})
    self.assertIsNone(second.actions.route)
    self.assertEqual(second.output, {"said": "plain", "n": 1})
    self.assertEqual(second.actions.state_delta, {"n": 2, "m": 1})

  def test_output_none_means_no_output(self):
    events, _ = run(load(router_workflow(route="none", output="none")), "hi")
    self.assertEqual(len(events), 1)
    self.assertIsNone(events[0].output)
    self.assertIsNone(events[0].node_info.output_for)

  def test_failures_are_router_errors_naming_node_and_field(self):
    cases = {
        "state.n": ({"route": "1", "state": {"n": "state.missing"}},
                    "'dict object' has no attribute 'missing'"),
        "route": ({"route": "{'a': 1}"}, "a route is a label"),
        "output": ({"route": "1", "output": "[state.gone]"}, "gone"),
        "state.m": ({"route": "1", "state": {"m": "state.items"}}, "not a JSON value"),
    }
    for field, (keys, reason) in cases.items():
      with self.subTest(field):
        events, error = run(load(router_workflow(**keys)), "hi")
        self.assertIsInstance(error, adk_flow.RouterError)
        (event,) = events
        self.assertEqual(event.error_code, "RouterError")
        self.assertTrue(event.error_message.startswith(f"r: {field}: "), event.error_message)
        self.assertIn(reason, event.error_message)
        self.assertEqual(event.author, "wf")
        self.assertEqual(event.node_info.path, "wf@1/r@1")


class SetRoute(unittest.TestCase):

  def test_declaration_is_the_contracts(self):
    d = FunctionTool(adk_flow.set_route)._get_declaration()
    self.assertEqual(d.name, "set_route")
    self.assertEqual(
        d.description,
        "Sets the route of this workflow step: the label of the outgoing edge to follow.")
    schema = d.parameters_json_schema
    self.assertEqual(schema["properties"]["route"]["type"], "string")
    self.assertEqual(schema["required"], ["route"])

  def test_sets_the_route_on_its_actions_and_answers_it(self):
    class Ctx:
      class actions:
        route = None
    ctx = Ctx()
    self.assertEqual(adk_flow.set_route("billing", ctx), {"route": "billing"})
    self.assertEqual(ctx.actions.route, "billing")


if __name__ == "__main__":
  unittest.main()
