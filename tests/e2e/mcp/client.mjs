// The MCP client of tests/e2e/mcp_gateway_e2e.sh, built on @modelcontextprotocol/sdk: starts
// `warden mcp-gateway … -- node mcp-server-filesystem DIR` over stdio and checks what a real
// client sees. Every step has a deadline: a hang fails the test, it never passes it.
//
//   node client.mjs WARDEN_BIN SERVER_JS DIR RULES_DIR...
import { readFileSync, readdirSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [wardenBin, serverJs, dir, ...rules] = process.argv.slice(2);
const STEP_MS = 30000;  // a hang guard, not a latency threshold

let failures = 0;
function check(ok, what, detail = "") {
  console.log(`${ok ? "ok" : "FAIL"}: ${what}${ok || !detail ? "" : `\n  ${detail}`}`);
  if (!ok) failures++;
}
function within(promise, what) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${STEP_MS} ms (hang)`)), STEP_MS);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
const textOf = (result) => (result.content ?? []).map((c) => c.text ?? "").join("\n");

const args = ["mcp-gateway", "--server-name", "filesystem", "--workspace", dir, "--home", `${dir}/home`];
for (const r of rules) args.push("--rules", r);
args.push("--", process.execPath, serverJs, dir);

const transport = new StdioClientTransport({ command: wardenBin, args, stderr: "pipe" });
let gatewayErr = "";
transport.stderr.on("data", (chunk) => { gatewayErr += chunk.toString(); });
let closed = false;
const closedPromise = new Promise((resolve) => {
  transport.onclose = () => { closed = true; resolve(); };
});
const client = new Client({ name: "warden-e2e", version: "1.0.0" }, { capabilities: {} });

try {
  await within(client.connect(transport), "initialize through the gateway");
  // Client.connect replaced transport.onclose with its own; chain ours after it.
  const sdkOnClose = transport.onclose;
  transport.onclose = () => { sdkOnClose?.(); closed = true; };

  // tools/list: the test rule hides move_file, everything else stays.
  const tools = (await within(client.listTools(), "tools/list")).tools.map((t) => t.name);
  check(tools.includes("read_text_file"), "tools/list keeps read_text_file", tools.join(","));
  check(!tools.includes("move_file"), "tools/list hides move_file (test rule)", tools.join(","));

  // An everyday read in the workspace passes and returns the file.
  const readme = await within(
    client.callTool({ name: "read_text_file", arguments: { path: `${dir}/README.md` } }), "read README.md");
  check(!readme.isError && textOf(readme).includes("warden-e2e-readme-marker"),
        "read of README.md is allowed and returns its content", JSON.stringify(readme));

  // A credential file is refused by Warden with the reason; its content never appears.
  const env = await within(
    client.callTool({ name: "read_text_file", arguments: { path: `${dir}/.env` } }), "read .env");
  check(env.isError === true, "read of .env is refused with isError", JSON.stringify(env));
  check(textOf(env).startsWith("Warden: "), `the refusal carries Warden's reason: ${textOf(env)}`, textOf(env));
  check(!JSON.stringify(env).includes("sk-e2e-secret-marker"), "the credential never reaches the client");

  // A killed server is reported to the client, not a hang: the gateway's own child is found
  // through /proc (never by name: other servers may run on this machine).
  const gatewayPid = transport.pid;
  const children = readdirSync(`/proc/${gatewayPid}/task`).flatMap((t) =>
    readFileSync(`/proc/${gatewayPid}/task/${t}/children`, "utf8").trim().split(/\s+/).filter(Boolean));
  check(children.length === 1, "the gateway runs one server child", children.join(","));
  process.kill(Number(children[0]), "SIGKILL");
  let outcome;
  try {
    const after = await within(
      client.callTool({ name: "read_text_file", arguments: { path: `${dir}/README.md` } }), "call after the kill");
    outcome = `answered: ${JSON.stringify(after)}`;
  } catch (e) {
    outcome = `error: ${e.message}`;
  }
  check(outcome.startsWith("error: "), "a call after the server was killed fails", outcome);
  await within(closedPromise.then(() => closed || true), "the transport closing");
  check(closed, "the gateway closes the transport when its server is gone");
  check(/MCP server exited: signal 9/.test(gatewayErr), "the gateway says the server died", gatewayErr);
} catch (e) {
  check(false, "the session ran to the end", e.stack ?? String(e));
} finally {
  await client.close().catch(() => {});
}
if (failures) console.log(`--- gateway stderr ---\n${gatewayErr}`);
console.log(failures ? `${failures} check(s) failed` : "all checks passed");
process.exit(failures ? 1 : 0);
