// A one-shot agent, as CLIs such as the MCP Inspector's are: it connects
// (the SDK opens its standalone GET stream), makes one call and exits
// without ending its client session (no DELETE). The server learns it has
// gone only from its stream closing.
//
//   node oneshot.mjs http://127.0.0.1:8080/sessions/<id>/mcp <token> [name]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, name = "oneshot-cli"] = process.argv.slice(2);
if (!url || !token) {
  console.error("usage: node oneshot.mjs <session MCP URL> <bearer token> [client name]");
  process.exit(2);
}
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name, version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
console.log("listed", tools.length, "tools");
// Give the standalone GET stream time to be open, as a CLI that prints
// its answer does.
await new Promise((r) => setTimeout(r, 1500));
process.exit(0); // no terminateSession, no close: the process just ends
