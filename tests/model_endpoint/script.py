"""The script every wire format answers from (see __main__.py), and what they share."""

import json
import threading

SCRIPT = {}
_LOCK = threading.Lock()
_COUNT = [0]

OK = {"text": "ok", "output_tokens": 1}


def load(path):
    SCRIPT.update(json.load(open(path)))


def next_id(prefix):
    """A fresh ID for a message or a tool call."""
    with _LOCK:
        _COUNT[0] += 1
        return "%s_%08d" % (prefix, _COUNT[0])


def step(turns):
    """The step that answers a conversation. `turns` is the conversation as its wire format
    holds it, flattened to ("user", text) for what the user typed and ("result", None) for each
    tool result, in order."""
    at, marker = None, None
    for i, (kind, text) in enumerate(turns):
        if kind == "user":
            for k in SCRIPT:
                if k in text:
                    at, marker = i, k
    if marker is None:
        return OK
    done = sum(1 for kind, _ in turns[at + 1:] if kind == "result")
    steps = SCRIPT[marker]
    return steps[done] if done < len(steps) else OK


def send_json(handler, value):
    data = json.dumps(value).encode()
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def start_events(handler):
    """Starts a server-sent event stream; the connection closes when it ends."""
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.send_header("connection", "close")
    handler.end_headers()
    handler.close_connection = True
