// An MCP server on @modelcontextprotocol/sdk (the library real servers are built with) that
// serves local files the way file-exposing servers do: the resource template file://{+path}
// (resources/read), and a prompt `summarize` that embeds the file named by its `path`
// argument (prompts/get). Used by tests/e2e/mcp_resources_e2e.sh, which shows that without
// the gateway both hand out a credential file.
//
//   node resource_server.mjs
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "files", version: "1.0.0" });

server.registerResource(
  "file",
  new ResourceTemplate("file://{+path}", { list: undefined }),
  { description: "A local file" },
  async (uri) => ({ contents: [{ uri: uri.href, text: readFileSync(fileURLToPath(uri), "utf8") }] }),
);

server.registerPrompt(
  "summarize",
  { description: "Summarize a file", argsSchema: { path: z.string() } },
  ({ path }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Summarize:\n${readFileSync(path, "utf8")}` } }],
  }),
);

await server.connect(new StdioServerTransport());
