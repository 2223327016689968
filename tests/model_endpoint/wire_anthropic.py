"""The Anthropic Messages API (`POST /v1/messages`), streamed and not: Claude Code."""

import json

import script


def owns(path):
    return path.split("?")[0].endswith("/v1/messages")


def turns(body):
    out = []
    for m in body.get("messages", []):
        content = m.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for p in parts:
            if p.get("type") == "tool_result":
                out.append(("result", None))
            elif p.get("type") == "text" and m.get("role") == "user":
                out.append(("user", p.get("text", "")))
    return out


def answer(handler, body):
    step = script.step(turns(body))
    out_tokens = step.get("output_tokens", 1)
    if "tool" in step:
        block = {"type": "tool_use", "id": script.next_id("toolu"),
                 "name": step["tool"], "input": step["input"]}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": step["text"]}
        stop = "end_turn"
    usage = {"input_tokens": 10, "output_tokens": out_tokens,
             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    message = {"id": script.next_id("msg"), "type": "message",
               "role": "assistant", "model": body.get("model", "m"), "content": [block],
               "stop_reason": stop, "stop_sequence": None, "usage": usage}
    if not body.get("stream"):
        script.send_json(handler, message)
        return
    script.start_events(handler)

    def event(kind, data):
        handler.wfile.write(("event: %s\ndata: %s\n\n" % (kind, json.dumps(data))).encode())

    start = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
    event("message_start", {"type": "message_start", "message": start})
    if block["type"] == "tool_use":
        event("content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": dict(block, input={})})
        event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "input_json_delta",
                                                "partial_json": json.dumps(block["input"])}})
    else:
        event("content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": {"type": "text", "text": ""}})
        event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "text_delta", "text": block["text"]}})
    event("content_block_stop", {"type": "content_block_stop", "index": 0})
    event("message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": out_tokens}})
    event("message_stop", {"type": "message_stop"})


WIRE = (owns, answer)
