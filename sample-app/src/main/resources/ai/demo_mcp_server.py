"""The sample's MCP stdio server: newline-delimited JSON-RPC on stdin and stdout.

Tools: word_count (counts the words of a text) and network_interfaces (the interfaces this
server sees: in the sandbox, only lo). It sends nothing anywhere; it exits at the end of stdin.
"""
import json
import sys


def word_count(arguments):
    return str(len(arguments["text"].split()))


def network_interfaces(arguments):
    # /proc/net/dev lists the interfaces of this process's network namespace (two header lines).
    with open("/proc/net/dev") as devices:
        return ", ".join(line.split(":")[0].strip() for line in devices.readlines()[2:])


TOOLS = {
    "word_count": (word_count, "Count the words of a text",
                   {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    "network_interfaces": (network_interfaces, "List the network interfaces this server sees",
                           {"type": "object", "properties": {}}),
}


def result(method, params):
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "cave-sandbox-sample-server", "version": "1.0.0"}}
    if method == "tools/list":
        return {"tools": [{"name": name, "description": description, "inputSchema": schema}
                          for name, (_, description, schema) in TOOLS.items()]}
    if method == "tools/call":
        tool = TOOLS[params["name"]][0]
        return {"content": [{"type": "text", "text": tool(params.get("arguments") or {})}], "isError": False}
    return {}


for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        response = {"jsonrpc": "2.0", "id": message["id"],
                    "result": result(message.get("method"), message.get("params") or {})}
        print(json.dumps(response), flush=True)
