"""The tiny stdio MCP server of the LangChain4j integration's tests.

Speaks newline-delimited JSON-RPC 2.0 on stdin/stdout: initialize, ping, tools/list and
tools/call. Tools: add (the sum of two integers), whoami (this server's uid and the
variable MCP_GREETING) and connect (tries 127.0.0.1:<port>; the tests' own listener).
It says on stderr that it started, and exits at the end of stdin.
"""
import json
import os
import socket
import sys


def schema(**properties):
    return {"type": "object", "properties": properties, "required": list(properties)}


TOOLS = {
    "add": ("Add two integers", schema(a={"type": "integer"}, b={"type": "integer"}),
            lambda args: str(args["a"] + args["b"])),
    "whoami": ("This server's uid and MCP_GREETING", schema(),
               lambda args: "uid=%d greeting=%s" % (os.getuid(), os.environ.get("MCP_GREETING", "-"))),
    "connect": ("Try to connect to 127.0.0.1:port", schema(port={"type": "integer"}),
                lambda args: connect(args["port"])),
}


def connect(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        return "connected"
    except OSError as error:
        return "refused: %s" % error


def result(method, params):
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "cave-sandbox-lc4j-server", "version": "1"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [{"name": name, "description": description, "inputSchema": input_schema}
                          for name, (description, input_schema, _) in TOOLS.items()]}
    if method == "tools/call":
        text = TOOLS[params["name"]][2](params.get("arguments") or {})
        return {"content": [{"type": "text", "text": text}], "isError": False}
    raise LookupError(method)


sys.stderr.write("lc4j test server up\n")
sys.stderr.flush()
for line in sys.stdin:
    message = json.loads(line) if line.strip() else {}
    if "id" not in message or "method" not in message:
        continue
    try:
        answer = {"result": result(message["method"], message.get("params") or {})}
    except LookupError as error:
        answer = {"error": {"code": -32601, "message": "unknown: %s" % error}}
    answer.update(jsonrpc="2.0", id=message["id"])
    print(json.dumps(answer), flush=True)
