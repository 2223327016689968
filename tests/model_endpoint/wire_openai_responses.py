"""The OpenAI Responses API (`POST /v1/responses`), streamed and not: Codex, which always
streams. A step's tool call is a `custom_tool_call` when its input is a string (a freeform tool,
as Codex's `apply_patch`), else a `function_call` whose `arguments` are its input as JSON."""

import json

import script


def owns(path):
    return path.split("?")[0].endswith("/responses")


def turns(body):
    out = []
    for item in body.get("input", []):
        kind = item.get("type")
        if kind in ("function_call_output", "custom_tool_call_output"):
            out.append(("result", None))
        elif kind == "message" and item.get("role") == "user":
            content = item.get("content")
            parts = [{"text": content}] if isinstance(content, str) else content or []
            for p in parts:
                out.append(("user", p.get("text", "")))
    return out


def answer(handler, body):
    step = script.step(turns(body))
    if "tool" in step:
        call = {"id": script.next_id("fc"), "call_id": script.next_id("call"),
                "name": step["tool"], "status": "completed"}
        if isinstance(step["input"], str):
            item = dict(call, type="custom_tool_call", input=step["input"])
        else:
            item = dict(call, type="function_call", arguments=json.dumps(step["input"]))
    else:
        item = {"type": "message", "id": script.next_id("msg"), "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": step["text"], "annotations": []}]}
    out_tokens = step.get("output_tokens", 1)
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": out_tokens, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 10 + out_tokens}
    response = {"id": script.next_id("resp"), "object": "response", "status": "completed",
                "model": body.get("model", "m"), "output": [item], "usage": usage}
    if not body.get("stream"):
        script.send_json(handler, response)
        return
    script.start_events(handler)

    def event(kind, data):
        data = dict(data, type=kind)
        handler.wfile.write(("event: %s\ndata: %s\n\n" % (kind, json.dumps(data))).encode())

    event("response.created", {"response": dict(response, status="in_progress", output=[],
                                                usage=None)})
    event("response.output_item.added", {"output_index": 0, "item": item})
    if item["type"] == "message":
        event("response.output_text.delta", {"output_index": 0, "content_index": 0,
                                             "item_id": item["id"], "delta": step["text"]})
    event("response.output_item.done", {"output_index": 0, "item": item})
    event("response.completed", {"response": response})


WIRE = (owns, answer)
