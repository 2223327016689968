#!/usr/bin/env python3
"""A scripted model endpoint on 127.0.0.1, so that a real agent runs whole sessions offline in
the tests. It stands in for a model provider, nothing of ours. Each wire format the agents speak
is one module beside this file (`wire_<provider>.py`), chosen by the request's path:

- wire_anthropic: the Anthropic Messages API, streamed and not (Claude Code).
- wire_openai_responses: the OpenAI Responses API, streamed and not (Codex).
- wire_openai_chat: OpenAI's Chat Completions, streamed and not (OpenCode).
- wire_gemini: the Gemini API's generateContent, streamed (SSE) and not (Gemini CLI).

Usage: python3 tests/model_endpoint SCRIPT LOG
  SCRIPT: JSON {"<marker>": [step, ...], ...}. A request belongs to the prompt whose marker its
          conversation holds (the last user message that names one); its step is the number of
          tool results that follow that prompt. A step is {"tool": NAME, "input": {...},
          "output_tokens": N} or {"text": TEXT, "output_tokens": N}. A request that names no
          marker, or asks past the last step, gets the text "ok".
  LOG:    every request (path and body) is appended, one JSON line each.
Prints the port it listens on, then serves until killed (the tests kill it; it also stops by
itself after 10 minutes).
"""

import http.server
import json
import sys
import threading

import script
import wire_anthropic
import wire_gemini
import wire_openai_chat
import wire_openai_responses

# Each wire format: (whether a request path is its own, the function that answers).
WIRES = [wire_anthropic.WIRE, wire_openai_responses.WIRE, wire_openai_chat.WIRE, wire_gemini.WIRE]

script.load(sys.argv[1])
LOG = open(sys.argv[2], "a")
LOCK = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    do_HEAD = do_GET

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.loads(raw or b"{}")
        with LOCK:
            LOG.write(json.dumps({"path": self.path, "body": body}) + "\n")
            LOG.flush()
        for owns, answer in WIRES:
            if owns(self.path):
                answer(self, body)
                return
        self.do_GET()


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
threading.Timer(600, server.shutdown).start()
server.serve_forever()
