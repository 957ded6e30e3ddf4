"""`adk_flow.Router`: a workflow node that routes by Jinja expressions."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any
from typing import ClassVar
from typing import Optional

from google.adk.events.event import Event
from google.adk.workflow import BaseNode
from google.genai import types
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import PrivateAttr
from pydantic import StrictStr
from typing_extensions import override

from ._expressions import ExpressionError
from ._expressions import compile_expression
from ._expressions import evaluate
from ._expressions import snapshot


class RouterError(Exception):
  """A Router expression failed; ADK reports it as errorCode `RouterError`."""


class RouterConfig(BaseModel):
  """The keys a Router accepts in YAML; any other key is refused at load."""

  model_config = ConfigDict(extra="forbid")

  agent_class: StrictStr = "adk_flow.Router"
  name: StrictStr
  description: StrictStr = ""
  route: StrictStr
  output: Optional[StrictStr] = None
  state: Optional[dict[StrictStr, StrictStr]] = None


def _is_label(value: Any) -> bool:
  """A string, an integer or a boolean (bool is an int in Python)."""
  return isinstance(value, (str, int))


def as_input(value: Any) -> Any:
  """The node input as the expressions see it: JSON values, text for contents."""
  if isinstance(value, types.Content):
    return "".join(
        p.text for p in (value.parts or []) if p.text and not p.thought
    )
  if isinstance(value, BaseModel):
    return value.model_dump(mode="json", exclude_none=True)
  if isinstance(value, dict):
    return {k: as_input(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    return [as_input(v) for v in value]
  return value


class Router(BaseNode):
  """Routes, and optionally sets its output and session state, by Jinja expressions.

  `route`, `output` and each value of `state` are Jinja expressions over `input`
  (the node's input) and `state` (the session state as the node starts),
  compiled at load. Each run yields one event, as a FunctionNode returning
  `Event(route=..., output=..., state=...)` does; a failing expression raises
  `RouterError`, which fails the node and its workflow.
  """

  config_type: ClassVar[type[BaseModel]] = RouterConfig

  route: StrictStr
  """Jinja expression: a label, a list of labels, or none."""

  output: Optional[StrictStr] = None
  """Jinja expression for the output; absent: the input passes on unchanged."""

  state: Optional[dict[StrictStr, StrictStr]] = None
  """Session state keys to set, each a Jinja expression, evaluated in order."""

  _route: Any = PrivateAttr(default=None)
  _output: Any = PrivateAttr(default=None)
  _state: list = PrivateAttr(default_factory=list)

  def model_post_init(self, context: Any) -> None:
    super().model_post_init(context)
    try:
      field = "route"
      self._route = compile_expression(self.route)
      field = "output"
      self._output = (
          compile_expression(self.output) if self.output is not None else None
      )
      compiled = []
      for key, source in (self.state or {}).items():
        field = f"state.{key}"
        compiled.append((key, compile_expression(source)))
      self._state = compiled
    except ExpressionError as e:
      raise ValueError(f"{self.name}: {field}: {e}") from e

  @override
  async def _run_impl(
      self, *, ctx: Any, node_input: Any
  ) -> AsyncGenerator[Any, None]:
    variables = {"input": as_input(node_input), "state": snapshot(ctx.state)}
    field = "route"
    try:
      route = evaluate(self._route, variables)
      if not (
          route is None
          or _is_label(route)
          or (isinstance(route, list) and all(_is_label(r) for r in route))
      ):
        raise ExpressionError(
            "a route is a label (string, integer, boolean), a list of labels"
            f" or none, not {route!r}"
        )
      field = "output"
      if self._output is None:
        output = variables["input"]
      else:
        output = evaluate(self._output, variables)
      delta = {}
      for key, expression in self._state:
        field = f"state.{key}"
        delta[key] = evaluate(expression, variables)
    except ExpressionError as e:
      raise RouterError(f"{self.name}: {field}: {e}") from e
    yield Event(route=route, output=output, state=delta or None)
