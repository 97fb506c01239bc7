// A minimal agent for a raxol-ssh session, using the official TypeScript
// MCP SDK. Run it with the URL and token from the session's attach panel
// (ctrl+o in the terminal):
//
//   npm install @modelcontextprotocol/sdk
//   node agent.mjs http://127.0.0.1:8080/sessions/<id>/mcp <token>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error("usage: node agent.mjs <session MCP URL> <bearer token>");
  process.exit(2);
}
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "example-agent", version: "1.0.0" });
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
  console.log("update", n.params.uri, JSON.stringify(n.params._meta.patch));
});
await client.connect(transport);

const { tools } = await client.listTools();
console.log("tools the lens offers now:", tools.map((t) => t.name).join(", "));
// The focused widget's tools come right after the session tools, marked.
console.log("the human is on:", tools.filter((t) => t._meta?.focused).map((t) => t.name).join(", "));

await client.subscribeResource({ uri: "demo://state/services" });
const typed = await client.callTool({ name: "demo.search.type_into", arguments: { text: "bill" } });
console.log("type_into ->", typed.content[0].text);
await client.callTool({ name: "demo.search_btn.click", arguments: {} });
const shot = await client.callTool({ name: "raxol_screenshot", arguments: {} });
console.log(shot.content[0].text);
await new Promise((r) => setTimeout(r, 200)); // let the resource update arrive
await transport.terminateSession(); // leave the session, not just the connection
await client.close();
