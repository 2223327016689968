"""The Gemini API (`POST /v1beta/models/<model>:generateContent`, `:streamGenerateContent`
with `?alt=sse`, and `:countTokens`): Gemini CLI."""

import json

import script


def owns(path):
    return ":" in path.split("?")[0].rsplit("/", 1)[-1]


def turns(body):
    out = []
    for content in body.get("contents", []):
        for part in content.get("parts") or []:
            if "functionResponse" in part:
                out.append(("result", None))
            elif "text" in part and content.get("role") == "user":
                out.append(("user", part["text"]))
    return out


def answer(handler, body):
    method = handler.path.split("?")[0].rsplit(":", 1)[-1]
    if method == "countTokens":
        script.send_json(handler, {"totalTokens": 10})
        return
    step = script.step(turns(body))
    out_tokens = step.get("output_tokens", 1)
    if "tool" in step:
        part = {"functionCall": {"id": script.next_id("call"), "name": step["tool"],
                                 "args": step["input"]}}
    else:
        part = {"text": step["text"]}
    response = {"candidates": [{"content": {"role": "model", "parts": [part]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": out_tokens,
                                  "totalTokenCount": 10 + out_tokens},
                "modelVersion": "m", "responseId": script.next_id("resp")}
    if method != "streamGenerateContent":
        script.send_json(handler, response)
        return
    script.start_events(handler)
    handler.wfile.write(("data: %s\n\n" % json.dumps(response)).encode())


WIRE = (owns, answer)
