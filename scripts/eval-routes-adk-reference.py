#!/usr/bin/env python3
"""Regenerates tests/fixtures/serve/adk_eval_routes.json: what ADK 1.39.1's api_server
answers on its eval routes, for `it/serve/evals.rs` to compare adk-flow's answers with.

    python3 -m venv /tmp/adkref && /tmp/adkref/bin/pip install google-adk==1.39.1 pandas tabulate rouge-score
    /tmp/adkref/bin/python scripts/eval-routes-adk-reference.py

The app is the one the test serves (`weather`): one LLM agent with a `get_weather` tool,
whose model first calls the tool, then answers "It is sunny in Paris." (a fake model; no
network). The calls are those ADK's dev UI makes on its Eval tab, plus the current
spellings and the error cases. Each entry records method, path, request body, status and
the answer's body.
"""

import json
import os
import sys
import tempfile
import textwrap

from fastapi.testclient import TestClient
from google.adk.cli.fast_api import get_fast_api_app

AGENT = textwrap.dedent(
    '''
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types


    class Fake(BaseLlm):
        model: str = "fake"

        async def generate_content_async(self, llm_request, stream=False):
            last = llm_request.contents[-1]
            if any(p.function_response for p in last.parts):
                part = types.Part(text="It is sunny in Paris.")
            else:
                part = types.Part(function_call=types.FunctionCall(
                    name="get_weather", args={"city": "Paris"}))
            yield LlmResponse(content=types.Content(role="model", parts=[part]))


    def get_weather(city: str) -> dict:
        """Gets the weather."""
        return {"weather": "sunny"}


    root_agent = LlmAgent(
        name="weather",
        model=Fake(),
        instruction="Answer about {city} for {user_name?} and {app:x?}.",
        tools=[get_weather],
    )
    '''
)


def main() -> None:
    out_path = os.path.join(
        os.path.dirname(__file__), "..", "tests", "fixtures", "serve", "adk_eval_routes.json"
    )
    agents = tempfile.mkdtemp()
    os.makedirs(os.path.join(agents, "weather"))
    with open(os.path.join(agents, "weather", "__init__.py"), "w") as f:
        f.write("from . import agent\n")
    with open(os.path.join(agents, "weather", "agent.py"), "w") as f:
        f.write(AGENT)
    app = get_fast_api_app(agents_dir=agents, web=False, session_service_uri="memory://")
    client = TestClient(app, raise_server_exceptions=False)
    out = {}

    def call(name, method, path, body=None):
        r = client.request(method, path, json=body)
        try:
            answer = r.json()
        except ValueError:
            answer = r.text
        out[name] = {"method": method, "path": path, "request": body,
                     "status": r.status_code, "body": answer}
        return answer

    sid = call("create_session", "POST", "/apps/weather/users/u1/sessions",
               {"state": {"city": "Paris"}})["id"]
    call("run", "POST", "/run", {"appName": "weather", "userId": "u1", "sessionId": sid,
                                 "newMessage": {"role": "user", "parts": [{"text": "Weather?"}]}})
    call("create_eval_set", "POST", "/apps/weather/eval-sets",
         {"eval_set": {"eval_set_id": "smoke", "eval_cases": []}})
    call("create_eval_set_dup", "POST", "/apps/weather/eval-sets",
         {"eval_set": {"eval_set_id": "smoke", "eval_cases": []}})
    call("create_eval_set_bad", "POST", "/apps/weather/eval-sets",
         {"eval_set": {"eval_set_id": "a-b", "eval_cases": []}})
    call("create_eval_set_legacy", "POST", "/apps/weather/eval_sets/legacy1")
    call("list_eval_sets", "GET", "/apps/weather/eval-sets")
    call("list_eval_sets_legacy", "GET", "/apps/weather/eval_sets")
    call("add_session", "POST", "/apps/weather/eval_sets/smoke/add_session",
         {"evalId": "case1", "sessionId": sid, "userId": "u1"})
    call("add_session_dup", "POST", "/apps/weather/eval-sets/smoke/add-session",
         {"evalId": "case1", "sessionId": sid, "userId": "u1"})
    call("list_evals", "GET", "/apps/weather/eval_sets/smoke/evals")
    call("list_evals_missing", "GET", "/apps/weather/eval_sets/nope/evals")
    case = call("get_eval", "GET", "/apps/weather/eval_sets/smoke/evals/case1")
    call("get_eval_new", "GET", "/apps/weather/eval-sets/smoke/eval-cases/case1")
    call("get_eval_missing", "GET", "/apps/weather/eval_sets/smoke/evals/nope")
    call("add_session2", "POST", "/apps/weather/eval_sets/smoke/add_session",
         {"evalId": "case2", "sessionId": sid, "userId": "u1"})
    call("update_eval", "PUT", "/apps/weather/eval_sets/smoke/evals/case2",
         dict(case, evalId="case2"))
    call("update_eval_mismatch", "PUT", "/apps/weather/eval_sets/smoke/evals/case2", case)
    call("delete_eval", "DELETE", "/apps/weather/eval_sets/smoke/evals/case2")
    call("delete_eval_missing", "DELETE", "/apps/weather/eval-sets/smoke/eval-cases/case2")
    call("run_eval_legacy", "POST", "/apps/weather/eval_sets/smoke/run_eval",
         {"evalIds": ["case1"],
          "evalMetrics": [{"metricName": "tool_trajectory_avg_score", "threshold": 1.0}]})
    call("run_eval", "POST", "/apps/weather/eval-sets/smoke/run",
         {"evalCaseIds": [],
          "evalMetrics": [{"metricName": "tool_trajectory_avg_score", "threshold": 0.5,
                           "criterion": {"threshold": 0.5, "match_type": "IN_ORDER"}},
                          {"metricName": "response_match_score", "threshold": 0.8}]})
    call("run_eval_missing", "POST", "/apps/weather/eval-sets/nope/run", {"evalMetrics": []})
    ids = call("list_eval_results_legacy", "GET", "/apps/weather/eval_results")
    call("list_eval_results", "GET", "/apps/weather/eval-results")
    first = sorted(ids)[0]
    call("get_eval_result_legacy", "GET", f"/apps/weather/eval_results/{first}")
    call("get_eval_result", "GET", f"/apps/weather/eval-results/{first}")
    call("metrics_info", "GET", "/apps/weather/metrics-info")
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print({k: v["status"] for k, v in out.items()}, file=sys.stderr)


if __name__ == "__main__":
    main()
