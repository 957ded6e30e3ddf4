"""Declarative routing for Google ADK 2.13 Workflow graphs written in YAML.

- `adk_flow.Router`: `agent_class: adk_flow.Router`, a node that routes (and may set
  its output and session state) by Jinja expressions;
- `adk_flow.set_route`: `tools: [{name: adk_flow.set_route}]`, a function tool with
  which an LLM node picks its outgoing edge.

Both follow adk-flow's Workflow contract, so the same YAML files run in adk-flow and in
ADK 2.13.
"""

from ._router import Router
from ._router import RouterError
from ._set_route import set_route

__all__ = ["Router", "RouterError", "set_route"]
