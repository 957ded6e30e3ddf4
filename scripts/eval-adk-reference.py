#!/usr/bin/env python3
"""Regenerates tests/fixtures/eval/adk/expected.json: the scores ADK 1.39.1's own
evaluation code gives the eval sets under tests/fixtures/eval/adk/, for `adk-flow eval` to
be compared with, score by score.

    python3 -m venv /tmp/adkref && /tmp/adkref/bin/pip install google-adk==1.39.1 rouge-score pandas tabulate jinja2
    /tmp/adkref/bin/python scripts/eval-adk-reference.py

ADK loads the same Agent Config files (root_agent.yaml); its models are replaced by a
scripted model that serves the replies of script.yaml per agent (ADK tells the model the
agent's name in the system instruction), restarted for every eval case as
`adk-flow eval --script` does, and the judge (`judge-model`) serves the script's `judge`
replies in order (the simulated user, `user-model`, its `user` replies); a set folder
with its own script.yaml uses that. Each case runs alone, in its own session service, so no state leaks
between cases. Nothing reaches the network.
"""

import asyncio
import json
import os
import re
import sys
from typing import ClassVar

import yaml
from google.adk.agents import config_agent_utils
from google.adk.evaluation import eval_config as eval_config_lib
from google.adk.evaluation.base_eval_service import (EvaluateConfig, EvaluateRequest,
                                                     InferenceConfig, InferenceRequest)
from google.adk.evaluation.eval_set import EvalSet
from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from google.adk.evaluation.local_eval_service import LocalEvalService
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file
from google.adk.evaluation.simulation.llm_backed_user_simulator import LlmBackedUserSimulatorConfig
from google.adk.evaluation.simulation.user_simulator_provider import UserSimulatorProvider
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.models.registry import LLMRegistry
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "eval", "adk")
STATE = {"replies": {}, "judge": [], "user": []}


def reset(script):
    STATE["replies"] = {k: list(v) for k, v in script.get("replies", {}).items()}
    STATE["judge"] = list(script.get("judge", []))
    STATE["user"] = list(script.get("user", []))


def script_for(set_path):
    """The set's own script.yaml, else the shared one."""
    own = os.path.join(os.path.dirname(set_path), "script.yaml")
    path = own if os.path.exists(own) else os.path.join(HERE, "script.yaml")
    return yaml.safe_load(open(path, encoding="utf-8"))


def part(p):
    if "text" in p:
        return types.Part(text=p["text"])
    c = p["function_call"]
    return types.Part(function_call=types.FunctionCall(name=c["name"], args=c.get("args", {})))


def content(reply):
    if "parts" in reply:
        parts = [part(p) for p in reply["parts"]]
    elif "function_calls" in reply:
        parts = [part({"function_call": c}) for c in reply["function_calls"]]
    else:
        parts = [part(reply)]
    return types.Content(role="model", parts=parts)


class ScriptedAgents(BaseLlm):
    @classmethod
    def supported_models(cls):
        return [r"gemini-.*"]

    async def generate_content_async(self, llm_request, stream=False):
        si = llm_request.config.system_instruction or ""
        agent = re.search(r'Your internal name is "([^"]+)"', si).group(1)
        reply = STATE["replies"][agent].pop(0)
        yield LlmResponse(content=content(reply))


class ScriptedJudge(BaseLlm):
    queue: ClassVar[str] = "judge"

    @classmethod
    def supported_models(cls):
        return [r"judge-.*"]

    async def generate_content_async(self, llm_request, stream=False):
        reply = STATE[self.queue].pop(0)
        text = reply if isinstance(reply, str) else reply["text"]
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


class ScriptedUser(ScriptedJudge):
    queue: ClassVar[str] = "user"

    @classmethod
    def supported_models(cls):
        return [r"user-.*"]


async def evaluate_set(path, root_agent):
    config = eval_config_lib.get_evaluation_criteria_or_default(
        os.path.join(os.path.dirname(path), "test_config.json"))
    metrics = eval_config_lib.get_eval_metrics_from_config(config)
    set_id = os.path.basename(path).split(".")[0]
    script = script_for(path)
    eval_set = load_eval_set_from_file(path, set_id)
    out = {}
    for case in eval_set.eval_cases:
        manager = InMemoryEvalSetsManager()
        manager.create_eval_set("app", eval_set.eval_set_id)
        manager.add_eval_case("app", eval_set.eval_set_id, case)
        sim_config = None
        if config.user_simulator_config is not None:
            sim_config = LlmBackedUserSimulatorConfig.model_validate(
                config.user_simulator_config.model_dump())
        provider = UserSimulatorProvider(user_simulator_config=sim_config)
        service = LocalEvalService(root_agent=root_agent, eval_sets_manager=manager,
                                   session_service=InMemorySessionService(),
                                   user_simulator_provider=provider)
        reset(script)
        request = InferenceRequest(app_name="app", eval_set_id=eval_set.eval_set_id,
                                   eval_case_ids=[case.eval_id],
                                   inference_config=InferenceConfig(parallelism=1))
        inferences = [r async for r in service.perform_inference(request)]
        evaluate = EvaluateRequest(inference_results=inferences,
                                   evaluate_config=EvaluateConfig(eval_metrics=metrics, parallelism=1))
        results = [r async for r in service.evaluate(evaluate)]
        (result,) = results
        out[case.eval_id] = {
            "final_eval_status": result.final_eval_status.value,
            "metrics": [
                {
                    "metric_name": m.metric_name,
                    "score": m.score,
                    "eval_status": m.eval_status.value,
                    "per_invocation": [
                        inv.eval_metric_results[i].score
                        for inv in result.eval_metric_result_per_invocation
                    ],
                    "rubric_scores": [
                        [r.rubric_id, r.score] for r in (m.details.rubric_scores or [])
                    ],
                }
                for i, m in enumerate(result.overall_eval_metric_results)
            ],
        }
    return out


async def main():
    LLMRegistry._register(r"gemini-.*", ScriptedAgents)
    LLMRegistry._register(r"judge-.*", ScriptedJudge)
    LLMRegistry._register(r"user-.*", ScriptedUser)
    root_agent = config_agent_utils.from_config(os.path.join(HERE, "root_agent.yaml"))
    expected = {}
    for rel in ["exact/cases.evalset.json", "in_order/old_form.test.json",
                "any_order/cases.evalset.json", "hallucinations/cases.evalset.json",
                "scenario/cases.evalset.json"]:
        expected[rel] = await evaluate_set(os.path.join(HERE, rel), root_agent)
    with open(os.path.join(HERE, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"generated_by": "scripts/eval-adk-reference.py with google-adk 1.39.1",
                   "sets": expected}, f, indent=1)
        f.write("\n")
    print(json.dumps(expected, indent=1))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
