"""Jinja expressions of an `adk_flow.Router`: compiled once, evaluated per run."""

from __future__ import annotations

import copy
from typing import Any

from jinja2 import nodes
from jinja2 import StrictUndefined
from jinja2 import TemplateSyntaxError
from jinja2 import Undefined
from jinja2.parser import Parser
from jinja2.sandbox import SandboxedEnvironment

# One sandboxed environment for every Router: using a missing variable, key or
# attribute fails, except through `default` and the `defined` tests.
_ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)


class ExpressionError(Exception):
  """An expression that failed to compile or to evaluate."""


# The dialect adk-flow's contract allows: what jinja2 and minijinja both do. Refusing
# the rest here keeps a file that loads in ADK loading in adk-flow too.
FILTERS = frozenset(
    {"default", "lower", "upper", "trim", "length", "int", "string", "join",
     "first", "last"}
)
TESTS = frozenset({"defined", "undefined", "none"})


def _check_dialect(tree) -> None:
  kinds = (nodes.Call, nodes.Filter, nodes.Test)
  # find_all leaves out the node it is called on.
  for node in [tree, *tree.find_all(kinds)]:
    if not isinstance(node, kinds):
      continue
    if isinstance(node, nodes.Call):
      raise ExpressionError(
          "calls are not part of the expression dialect (no method calls:"
          " write state['items'], not state.items())"
      )
    kind = "filter" if isinstance(node, nodes.Filter) else "test"
    allowed = FILTERS if kind == "filter" else TESTS
    if node.name not in allowed:
      raise ExpressionError(
          f"unknown {kind} {node.name!r} (the dialect has: "
          f"{', '.join(sorted(allowed))})"
      )


def compile_expression(source: str):
  """The compiled expression, or ExpressionError naming what is wrong with it."""
  try:
    _check_dialect(Parser(_ENV, source, state="variable").parse_expression())
    return _ENV.compile_expression(source, undefined_to_none=False)
  except TemplateSyntaxError as e:
    raise ExpressionError(f"{e.message} (in {source!r})") from e
  except ExpressionError as e:
    raise ExpressionError(f"{e} (in {source!r})") from e


def evaluate(expression, variables: dict[str, Any]) -> Any:
  """Evaluates a compiled expression; an undefined result is an error."""
  try:
    value = expression(**variables)
  except ExpressionError:
    raise
  except Exception as e:  # jinja2 raises many kinds; all are the author's error
    raise ExpressionError(str(e) or type(e).__name__) from e
  return _plain(value)


_SCALARS = (str, int, float, bool, type(None))


def _plain(value: Any) -> Any:
  """The value as JSON data (tuples as lists); an undefined anywhere inside, or
  anything that is not JSON data (a method named without calling it), is an error."""
  if isinstance(value, Undefined):
    # The message says what was missing ("'dict object' has no attribute 'x'").
    raise ExpressionError(value._undefined_message)
  if isinstance(value, (list, tuple)):
    return [_plain(v) for v in value]
  if isinstance(value, dict):
    for k in value:
      if not isinstance(k, _SCALARS):
        raise ExpressionError(f"a mapping key is not a JSON value: {k!r}")
    return {k: _plain(v) for k, v in value.items()}
  if not isinstance(value, _SCALARS):
    raise ExpressionError(
        f"the result is not a JSON value but a {type(value).__name__}"
    )
  return value


def snapshot(state: Any) -> dict[str, Any]:
  """A deep copy of the session state as a plain dict."""
  as_dict = state.to_dict() if hasattr(state, "to_dict") else dict(state)
  return copy.deepcopy(as_dict)
