#!/usr/bin/env python3
"""A scripted model endpoint on 127.0.0.1 that answers the Anthropic Messages API (streamed and
not), so that a real agent (Claude Code) runs a whole session offline in the tests. It stands in
for a model provider, nothing of ours.

Usage: model_endpoint.py SCRIPT LOG
  SCRIPT: JSON {"<marker>": [step, ...], ...}. A request belongs to the prompt whose marker its
          messages hold (the last one that appears); its step is the number of tool results that
          follow that prompt. A step is {"tool": NAME, "input": {...}, "output_tokens": N} or
          {"text": TEXT, "output_tokens": N}. A request that names no marker, or asks past the
          last step, gets the text "ok".
  LOG:    every request body is appended, one JSON line each.
Prints the port it listens on, then serves until killed (the tests kill it; it also stops by
itself after 10 minutes).
"""

import http.server
import json
import sys
import threading

SCRIPT = json.load(open(sys.argv[1]))
LOG = open(sys.argv[2], "a")
LOCK = threading.Lock()
COUNT = [0]


def next_id(prefix):
    with LOCK:
        COUNT[0] += 1
        return "%s_%08d" % (prefix, COUNT[0])


def step_of(body):
    messages = body.get("messages", [])
    at, marker = None, None
    for i, m in enumerate(messages):
        text = json.dumps(m.get("content"))
        for k in SCRIPT:
            if k in text and m.get("role") == "user" and "tool_result" not in text:
                at, marker = i, k
    if marker is None:
        return {"text": "ok", "output_tokens": 1}
    done = sum(json.dumps(m.get("content")).count('"tool_result"') for m in messages[at + 1:])
    steps = SCRIPT[marker]
    return steps[done] if done < len(steps) else {"text": "ok", "output_tokens": 1}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(404)
        self.end_headers()

    do_HEAD = do_GET

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        with LOCK:
            LOG.write(json.dumps(body) + "\n")
            LOG.flush()
        step = step_of(body)
        out_tokens = step.get("output_tokens", 1)
        if "tool" in step:
            block = {"type": "tool_use", "id": next_id("toolu"),
                     "name": step["tool"], "input": step["input"]}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": step["text"]}
            stop = "end_turn"
        usage = {"input_tokens": 10, "output_tokens": out_tokens,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        message = {"id": next_id("msg"), "type": "message",
                   "role": "assistant", "model": body.get("model", "m"), "content": [block],
                   "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            data = json.dumps(message).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()

        def event(kind, data):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (kind, json.dumps(data))).encode())

        start = dict(message, content=[], stop_reason=None,
                     usage=dict(usage, output_tokens=1))
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


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
threading.Timer(600, server.shutdown).start()
server.serve_forever()
