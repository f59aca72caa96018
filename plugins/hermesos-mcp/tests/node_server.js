// A small MCP server over stdio in plain Node: lists one tool, "ping", which answers "pong".
"use strict";
const readline = require("readline");
const lines = readline.createInterface({ input: process.stdin });
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
lines.on("line", (line) => {
  const request = JSON.parse(line);
  if (request.id === undefined) return;
  const answer = { jsonrpc: "2.0", id: request.id };
  if (request.method === "initialize") {
    answer.result = {
      protocolVersion: request.params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: "node-ping", version: "1.0.0" },
    };
  } else if (request.method === "tools/list") {
    answer.result = {
      tools: [{ name: "ping", description: "Answer pong.", inputSchema: { type: "object", properties: {} } }],
    };
  } else if (request.method === "tools/call") {
    answer.result = { content: [{ type: "text", text: "pong" }], isError: false };
  } else if (request.method === "ping") {
    answer.result = {};
  } else {
    answer.error = { code: -32601, message: `no method ${request.method}` };
  }
  send(answer);
});
