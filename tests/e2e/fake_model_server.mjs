// Fake model server for the end-to-end tests: speaks the Anthropic Messages API (Claude Code)
// and the OpenAI Responses API (Codex) over SSE on 127.0.0.1, answering from a script file.
// Started by tests/e2e/lib.sh as `node fake_model_server.mjs SCRIPT.json LOG.jsonl`; prints
// "PORT <n>" on stdout once listening. Single-threaded (Node event loop), no dependencies.
//
// Script: {"turns": [TURN, …], "final": "text"}. TURN is {"calls": [CALL, …], "text": "…"}.
// CALL is {"name": TOOL, "input": OBJECT} (Claude tool_use / Codex function_call with the
// object as JSON arguments) or {"name": TOOL, "input": STRING} (Codex custom tool call such as
// apply_patch). The turn is chosen by counting the tool results already in the conversation
// (tool_result blocks / *_call_output items): turn i is answered when that count equals the
// number of calls in turns 0..i-1. Past the last turn, or in a request without tools, the
// answer is plain text ("final"). The script is re-read on every request.
// Every request is appended to LOG as one JSON line {"method", "path", "body"}.
import { createServer } from 'node:http';
import { readFileSync, appendFileSync } from 'node:fs';

const [scriptPath, logPath] = process.argv.slice(2);
if (!scriptPath || !logPath) {
  console.error('usage: fake_model_server.mjs SCRIPT.json LOG.jsonl');
  process.exit(2);
}

let counter = 0;
const nextId = (prefix) => `${prefix}_${process.pid}_${++counter}`;

function loadScript() {
  const script = JSON.parse(readFileSync(scriptPath, 'utf8'));
  if (!Array.isArray(script.turns)) throw new Error('script has no "turns" array');
  return script;
}

// The turn to answer given how many tool results the conversation already holds.
function pickTurn(script, results) {
  let seen = 0;
  for (const turn of script.turns) {
    if (seen === results) return turn;
    seen += (turn.calls || []).length;
    if (seen > results) return null; // mid-turn: some calls of the turn have no result yet
  }
  return null;
}

function finalText(script) {
  return script.final ?? 'Done.';
}

// ---- Anthropic Messages -------------------------------------------------------------------

function countAnthropicResults(body) {
  let n = 0;
  for (const m of body.messages || []) {
    if (Array.isArray(m.content)) {
      for (const block of m.content) if (block && block.type === 'tool_result') n++;
    }
  }
  return n;
}

function anthropicContent(body) {
  const script = loadScript();
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  const turn = hasTools ? pickTurn(script, countAnthropicResults(body)) : null;
  const content = [];
  if (turn && turn.text) content.push({ type: 'text', text: turn.text });
  if (turn) {
    for (const call of turn.calls || []) {
      content.push({ type: 'tool_use', id: nextId('toolu'), name: call.name, input: call.input ?? {} });
    }
  }
  if (content.length === 0) content.push({ type: 'text', text: hasTools ? finalText(script) : 'OK' });
  const stop = content.some((c) => c.type === 'tool_use') ? 'tool_use' : 'end_turn';
  return { content, stop };
}

function anthropicMessage(body, res) {
  const { content, stop } = anthropicContent(body);
  const id = nextId('msg');
  const model = body.model || 'claude-fake';
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model, content,
      stop_reason: stop, stop_sequence: null, usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send('message_start', { message: { id, type: 'message', role: 'assistant', model, content: [],
    stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
  send('message_stop', {});
  res.end();
}

// ---- OpenAI Responses ---------------------------------------------------------------------

function countOpenAIResults(body) {
  let n = 0;
  for (const item of Array.isArray(body.input) ? body.input : []) {
    if (item && typeof item.type === 'string' && item.type.endsWith('_call_output')) n++;
  }
  return n;
}

function openaiItems(body) {
  const script = loadScript();
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  const turn = hasTools ? pickTurn(script, countOpenAIResults(body)) : null;
  const items = [];
  const message = (text) => ({ type: 'message', id: nextId('msg'), role: 'assistant', status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }] });
  if (turn && turn.text) items.push(message(turn.text));
  if (turn) {
    for (const call of turn.calls || []) {
      if (typeof call.input === 'string') {
        items.push({ type: 'custom_tool_call', id: nextId('ctc'), call_id: nextId('call'), name: call.name,
          input: call.input, status: 'completed' });
      } else {
        items.push({ type: 'function_call', id: nextId('fc'), call_id: nextId('call'), name: call.name,
          arguments: JSON.stringify(call.input ?? {}), status: 'completed' });
      }
    }
  }
  if (items.length === 0) items.push(message(hasTools ? finalText(script) : 'OK'));
  return items;
}

function openaiResponse(body, res) {
  const items = openaiItems(body);
  const id = nextId('resp');
  const model = body.model || 'gpt-fake';
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  const base = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let seq = 0;
  const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  send('response.created', { response: { ...base, status: 'in_progress', output: [] } });
  items.forEach((item, output_index) => {
    if (item.type === 'message') {
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      send('response.content_part.added', { item_id: item.id, output_index, content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] } });
      send('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta: item.content[0].text });
      send('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text: item.content[0].text });
      send('response.content_part.done', { item_id: item.id, output_index, content_index: 0, part: item.content[0] });
    } else {
      send('response.output_item.added', { output_index, item });
    }
    send('response.output_item.done', { output_index, item });
  });
  send('response.completed', { response: { ...base, status: 'completed', output: items, usage } });
  res.end();
}

// ---- HTTP ---------------------------------------------------------------------------------

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    let body = null;
    try { body = raw ? JSON.parse(raw) : null; } catch { body = { unparsed: raw }; }
    const path = (req.url || '').split('?')[0];
    appendFileSync(logPath, JSON.stringify({ method: req.method, path, body }) + '\n');
    try {
      if (req.method === 'HEAD' || (req.method === 'GET' && path === '/')) {
        res.writeHead(200); res.end(); return;
      }
      if (req.method === 'POST' && path.endsWith('/messages/count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ input_tokens: 100 })); return;
      }
      if (req.method === 'POST' && path.endsWith('/messages')) { anthropicMessage(body || {}, res); return; }
      if (req.method === 'POST' && path.endsWith('/responses')) { openaiResponse(body || {}, res); return; }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'not_found', message: `fake server: no route ${req.method} ${path}` } }));
    } catch (err) {
      console.error(`fake server: ${err.stack || err}`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'fake_server_error', message: String(err) } }));
    }
  });
});

server.listen(0, '127.0.0.1', () => {
  console.log(`PORT ${server.address().port}`);
});
