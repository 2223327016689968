"""OpenAI's Chat Completions (`POST /v1/chat/completions`), streamed and not: OpenCode, through
an OpenAI-compatible provider. A step's tool call is a function call whose `arguments` are its
input as JSON. A request that offers no tools (OpenCode's for a session's title, which quotes
the prompt) gets the text "ok"."""

import json
import time

import script


def owns(path):
    return path.split("?")[0].endswith("/chat/completions")


def turns(body):
    out = []
    for m in body.get("messages", []):
        if m.get("role") == "tool":
            out.append(("result", None))
        elif m.get("role") == "user":
            content = m.get("content")
            parts = [{"text": content}] if isinstance(content, str) else content or []
            for p in parts:
                out.append(("user", p.get("text", "")))
    return out


def answer(handler, body):
    step = script.step(turns(body))
    if "tool" in step and not body.get("tools"):
        step = script.OK
    message = {"role": "assistant", "content": None}
    if "tool" in step:
        message["tool_calls"] = [{"id": script.next_id("call"), "type": "function",
                                  "function": {"name": step["tool"],
                                               "arguments": json.dumps(step["input"])}}]
        finish = "tool_calls"
    else:
        message["content"] = step["text"]
        finish = "stop"
    out_tokens = step.get("output_tokens", 1)
    usage = {"prompt_tokens": 10, "completion_tokens": out_tokens,
             "total_tokens": 10 + out_tokens}
    head = {"id": script.next_id("chatcmpl"), "created": int(time.time()),
            "model": body.get("model", "m")}
    if not body.get("stream"):
        script.send_json(handler, dict(head, object="chat.completion", usage=usage, choices=[
            {"index": 0, "message": message, "finish_reason": finish}]))
        return
    script.start_events(handler)

    def chunk(choices, **more):
        data = dict(head, object="chat.completion.chunk", choices=choices, **more)
        handler.wfile.write(("data: %s\n\n" % json.dumps(data)).encode())

    delta = dict(message)
    for i, call in enumerate(delta.get("tool_calls", [])):
        call["index"] = i
    chunk([{"index": 0, "delta": delta, "finish_reason": None}])
    chunk([{"index": 0, "delta": {}, "finish_reason": finish}])
    if body.get("stream_options", {}).get("include_usage"):
        chunk([], usage=usage)
    handler.wfile.write(b"data: [DONE]\n\n")


WIRE = (owns, answer)
