#!/usr/bin/env python3
"""Writes the fuzz targets' seed inputs into fuzz/corpus/TARGET/seed-*, from the
repository's own workflows, scripts and golden fixtures, and provider answers shaped like
those the provider tests serve. scripts/fuzz.sh runs it when a corpus is missing; the
committed corpora are the fuzzers' minimized result, seeds included."""

import json
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
SECRET = "sk-fuzz-0123456789"


def write(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (d / f"seed-{name}").write_bytes(data)


def workflow_seeds():
    """yaml_load: one file each, and folders whose root names other files (renamed to
    a.yaml, b.yaml, c.yaml, joined with NUL as the target reads them)."""
    singles = sorted(ROOT.glob("workflows/*.yaml")) + sorted(ROOT.glob("tests/validate/*/*.yaml"))
    singles += sorted(ROOT.glob("tests/flows/*.yaml"))
    for f in singles:
        if f.name.endswith((".script.yaml", ".test.yaml")):
            continue
        write("yaml_load", f"{f.parent.name}-{f.stem}", f.read_bytes())
    folders = [p.parent for p in ROOT.glob("tests/golden/*/root_agent.yaml")]
    folders += [p.parent for p in ROOT.glob("tests/validate/invalid/*/root_agent.yaml")]
    for folder in sorted(folders):
        root = (folder / "root_agent.yaml").read_text()
        others = [n for n in re.findall(r"config_path:\s*(\S+)", root) if (folder / n).exists()][:3]
        files = []
        for new, old in zip(["a.yaml", "b.yaml", "c.yaml"], others):
            root = root.replace(old, new)
            files.append((folder / old).read_text())
        write("yaml_load", f"golden-{folder.name}", "\0".join([root] + files))
    # A lookup table in a file of its own.
    support = (ROOT / "workflows/support.yaml").read_text().replace("data/orders.yaml", "a.yaml")
    orders = (ROOT / "workflows/data/orders.yaml").read_text()
    write("yaml_load", "support-lookup", support + "\0" + orders)
    everything = (ROOT / "tests/validate/valid/everything.yaml").read_text().replace("closer.yaml", "a.yaml")
    closer = (ROOT / "tests/validate/valid/closer.yaml").read_text()
    write("yaml_load", "everything-closer", everything + "\0" + closer)
    write("yaml_load", "env", "name: ${NAME:-a}\nmodel: ${MODEL}\ninstruction: ${TRICKY} ${UNSET}\n")


def script_seeds():
    scripts = sorted(ROOT.glob("workflows/*.script.yaml")) + sorted(ROOT.glob("tests/golden/*/script.yaml"))
    scripts += sorted(ROOT.glob("tests/validate/*/*.script.yaml")) + sorted(ROOT.glob("tests/validate/*/*/*.script.yaml"))
    for f in scripts:
        write("scripted", f"{f.parent.name}-{f.stem}", f.read_bytes())


def template_seeds():
    instructions = []
    for f in sorted(ROOT.glob("workflows/*.yaml")) + sorted(ROOT.glob("tests/golden/*/*.yaml")):
        instructions += re.findall(r"instruction:\s*(.+)", f.read_text())
    for i, text in enumerate(instructions):
        write("template", f"instruction-{i}", text)
    for i, text in enumerate([
        "Hi {a}, {n} items{none}, {d}",
        "{{a}} { a } {a?} {missing?} {app:a} {user:x?} {temp:y?}",
        "{artifact.doc} {artifact.gone?} {artifact.gone}",
        'JSON: {"k": 1} {not a key} {1a} {a:b:c} {app:}',
        "{{{a}}} {{a} {a}} }{a}{ {\u00e9} {a\u00b2} {\x1ca\x1f}",
        "{missing}",
    ]):
        write("template", f"rules-{i}", text)


def sse(events, end="\n\n"):
    return "".join(f"data: {e}{end}" for e in events)


def provider_seeds():
    gemini = [
        [
            '{"candidates": [{"content": {"parts": [{"text": "Hel"}], "role": "model"}}]}',
            '{"candidates": [{"content": {"parts": [{"text": "lo "}], "role": "model"}}]}',
            '{"candidates": [{"content": {"parts": [{"text": "world"}, {"functionCall": {"name": "f", "args": {"a": 1}}}], "role": "model"}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 5, "totalTokenCount": 42}}',
        ],
        [
            '{"candidates": [{"content": {"parts": [{"text": "Once upon"}], "role": "model"}}]}',
            '{"candidates": [{"finishReason": "SAFETY"}]}',
        ],
        ['{"promptFeedback": {"blockReason": "SAFETY"}}'],
        ['{"candidates": [{"content": {"parts": [{"text": "thinking", "thought": true, "thoughtSignature": "c2ln"}, {"functionCall": {"id": "c1", "name": "lookup_order", "args": {"order_id": "A-2"}}}], "role": "model"}, "finishReason": "STOP"}]}'],
        ['{"error": {"code": 400, "message": "API key not valid: ' + SECRET + '", "status": "INVALID_ARGUMENT"}}'],
        ['{"candidates": [{"content": {"parts": [{"text": "x"}]}}]}', "[DONE]"],
    ]
    openai = [
        [
            '{"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}',
            '{"id": "c", "choices": [{"index": 0, "delta": {"content": "Hel"}}]}',
            '{"id": "c", "choices": [{"index": 0, "delta": {"content": "lo"}}]}',
            '{"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}',
            '{"id": "c", "choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}}',
            "[DONE]",
        ],
        [
            '{"choices": [{"index": 0, "delta": {"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "lookup_order", "arguments": ""}}]}}]}',
            '{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\\"order"}}]}}]}',
            '{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_2", "type": "function", "function": {"name": "list_orders", "arguments": "{}"}}]}}]}',
            '{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "_id\\": \\"A-2\\"}"}}]}}]}',
            '{"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}',
            "[DONE]",
        ],
        ['{"error": {"message": "Incorrect API key provided: ' + SECRET + '", "type": "invalid_request_error", "code": "invalid_api_key"}}'],
        ['{"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "length"}]}'],
    ]
    answers = {
        "gemini": [
            json.dumps({"candidates": [{"content": {"parts": [{"text": "Hello"}], "role": "model"}, "finishReason": "STOP"}], "usageMetadata": {"totalTokenCount": 7}}),
            json.dumps({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": {}}}], "role": "model"}, "finishReason": "STOP"}]}),
            json.dumps({"promptFeedback": {"blockReason": "SAFETY"}}),
        ],
        "openai": [
            json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "smollm2", "choices": [{"index": 0, "message": {"role": "assistant", "content": "A-2 ships today."}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}}),
            json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [{"id": "call_abc", "type": "function", "function": {"name": "lookup_order", "arguments": "{\"order_id\": \"A-2\"}"}}]}, "finish_reason": "tool_calls"}]}),
        ],
    }
    for target, streams in (("gemini", gemini), ("openai", openai)):
        for i, events in enumerate(streams):
            write(target, f"stream-{i}", sse(events))
            write(target, f"stream-{i}-crlf-cut", b"\x03\x07\x01\xff" + sse(events, "\r\n\r\n").encode())
            write("sse", f"{target}-{i}", sse(events))
        for i, body in enumerate(answers[target]):
            write(target, f"answer-{i}", body)
    write("sse", "spec", b"\xef\xbb\xbfdata: a\r\n\r\n: comment\ndata:b\ndata: c\nevent: x\nid: 1\nretry: 9\nbogus\nfoo: bar\n\ndata\n\ndata: d\r\rdata: unfinished")
    write("sse", "cut", b"\x02\x05\xffdata: \xff\n\n\xef\xbb\xbfdata: x\r\n\r")


workflow_seeds()
script_seeds()
template_seeds()
provider_seeds()
for d in sorted(CORPUS.iterdir()):
    print(f"{d.name}: {len(list(d.iterdir()))} seeds")
