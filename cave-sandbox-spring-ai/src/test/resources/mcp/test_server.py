"""A small MCP stdio server for the tests: newline-delimited JSON-RPC on stdin and stdout.

Tools: echo (returns its text), getenv (returns a variable of its environment) and
fetch_loopback (tries to send a message to 127.0.0.1:<port> and says what happened).
It logs to stderr and exits at the end of stdin.
"""
import json
import os
import socket
import sys

TOOLS = [
    {
        "name": "echo",
        "description": "Return the given text",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "getenv",
        "description": "Return the value of a variable of the server's environment",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
    {
        "name": "fetch_loopback",
        "description": "Try to send a message to 127.0.0.1 on the given port",
        "inputSchema": {"type": "object", "properties": {"port": {"type": "integer"}}, "required": ["port"]},
    },
]


def fetch_loopback(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
            connection.sendall(b"from-the-mcp-server")
        return "connected"
    except OSError as error:
        return "failed: " + str(error)


def call(name, arguments):
    if name == "echo":
        return arguments["text"]
    if name == "getenv":
        return os.environ.get(arguments["name"], "<unset>")
    if name == "fetch_loopback":
        return fetch_loopback(arguments["port"])
    raise KeyError(name)


def answer(request):
    method = request.get("method")
    params = request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "cave-sandbox-test-server", "version": "1.0.0"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        text = call(params["name"], params.get("arguments") or {})
        return {"content": [{"type": "text", "text": text}], "isError": False}
    return None


def main():
    print("test server started", file=sys.stderr, flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if "id" not in request:
            continue
        result = answer(request)
        if result is None:
            response = {"jsonrpc": "2.0", "id": request["id"],
                        "error": {"code": -32601, "message": "no method " + str(request.get("method"))}}
        else:
            response = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        sys.stdout.write(json.dumps(response) + "\n")
        sys.stdout.flush()
    print("test server: end of stdin", file=sys.stderr, flush=True)


main()
