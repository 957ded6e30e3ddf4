"""`adk_flow.set_route`: the function tool an LLM node routes its workflow with."""

from __future__ import annotations

from google.adk.tools.tool_context import ToolContext


def set_route(route: str, tool_context: ToolContext) -> dict:
  """Sets the route of this workflow step: the label of the outgoing edge to follow."""
  # The route rides on this call's function-response event; the workflow takes
  # the node's last route when the node completes.
  tool_context.actions.route = route
  return {"route": route}
