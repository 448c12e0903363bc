// The afm playground: chat, schema and tool modes over the server's own OpenAI-compatible API
// (streamed), with a profiler row per turn from the server's `timings`. No dependencies.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { messages: [], turn: 0, busy: false };

const DEFAULT_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string" },
    age: { type: "integer", minimum: 0, maximum: 150 },
    city: { type: "string" },
  },
  required: ["name", "age", "city"],
  additionalProperties: false,
};
const DEFAULT_TOOLS = [{
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather in a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, unit: { enum: ["celsius", "fahrenheit"] } },
      required: ["city"],
    },
  },
}];

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("api-key").value.trim();
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

function status(text) { $("status").textContent = text; }

function addMessage(role, text, cls) {
  const div = document.createElement("div");
  div.className = "message " + (cls || role);
  const label = document.createElement("span");
  label.className = "role";
  label.textContent = role;
  const body = document.createElement("span");
  body.className = "text";
  body.textContent = text;
  div.append(label, body);
  $("messages").append(div);
  $("messages").scrollTop = $("messages").scrollHeight;
  return body;
}

async function loadModels() {
  try {
    const r = await fetch("/v1/models", { headers: headers() });
    const body = await r.json();
    if (!r.ok) throw new Error(body.error ? body.error.message : r.statusText);
    const select = $("model");
    select.replaceChildren(...body.data.map((m) => new Option(m.id, m.id)));
    status("ready");
  } catch (e) {
    status("could not list models: " + e.message);
  }
}

// Closes an unfinished JSON text (open strings, objects, arrays) so it parses; a trailing
// separator or a key still waiting for its value is cut back until the text parses.
function closeJson(text) {
  const stack = [];
  let inString = false, escaped = false;
  for (const c of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") stack.push(c === "{" ? "}" : "]");
    else if (c === "}" || c === "]") stack.pop();
  }
  let out = text;
  if (inString) out = out.replace(/\\(u[0-9a-fA-F]{0,3})?$/, "") + '"';
  out = out.replace(/[\s,:]+$/, "");
  return out + stack.reverse().join("");
}

function partialValue(text) {
  let end = text.length;
  for (let tries = 0; end > 0 && tries < 64; ++tries) {
    try { return JSON.parse(closeJson(text.slice(0, end))); } catch (e) { /* cut back */ }
    const cut = Math.max(text.lastIndexOf(",", end - 1), text.lastIndexOf(":", end - 1),
                         text.lastIndexOf("{", end - 2) + 1, text.lastIndexOf("[", end - 2) + 1);
    if (cut <= 0 || cut >= end) break;
    end = cut;
  }
  return undefined;
}

function requestBody(mode) {
  const body = {
    model: $("model").value,
    messages: [{ role: "system", content: $("system").value }, ...state.messages],
    temperature: Number($("temperature").value),
    max_tokens: Number($("max-tokens").value),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (mode === "schema") {
    body.response_format = {
      type: "json_schema",
      json_schema: { name: "answer", schema: JSON.parse($("schema").value), strict: true },
    };
  } else if (mode === "tools") {
    body.tools = JSON.parse($("tools").value);
    body.tool_choice = $("tool-choice").value;
  }
  return body;
}

// Reads a server-sent event stream, calling onEvent with each JSON payload.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const data = line.slice(6);
        if (data !== "[DONE]") onEvent(JSON.parse(data));
      }
    }
  }
}

function addProfileRow(p) {
  const cells = [p.turn, `${p.promptTokens} (${p.cachedTokens})`, p.prefillMs.toFixed(1),
                 p.firstTokenMs.toFixed(1), p.tokens, p.tokensPerSecond.toFixed(1),
                 p.maskUsPerToken.toFixed(1)];
  const row = document.createElement("tr");
  row.dataset.turn = p.turn;
  for (const c of cells) {
    const td = document.createElement("td");
    td.textContent = c;
    row.append(td);
  }
  $("profile").tBodies[0].append(row);
}

async function send(prompt) {
  const mode = $("mode").value;
  let body;
  try {
    state.messages.push({ role: "user", content: prompt });
    body = requestBody(mode);
  } catch (e) {
    state.messages.pop();
    status("the " + mode + " JSON does not parse: " + e.message);
    return;
  }
  addMessage("user", prompt);
  const answer = addMessage("assistant", "");
  const turn = ++state.turn;
  let text = "", timings = null, usage = null, firstMs = null, toolCalls = [];
  $("snapshot").textContent = "";
  $("value").textContent = "";
  delete $("value").dataset.final;
  state.busy = true;
  $("send").disabled = true;
  status("generating ...");
  const start = performance.now();
  try {
    const r = await fetch("/v1/chat/completions",
                          { method: "POST", headers: headers(), body: JSON.stringify(body) });
    if (!r.ok) {
      const err = await r.json();
      throw new Error(err.error ? err.error.message : r.statusText);
    }
    await readEvents(r, (chunk) => {
      if (chunk.error) throw new Error(chunk.error.message);
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices && chunk.choices[0];
      if (!choice) return;
      if (choice.finish_reason && chunk.timings) timings = chunk.timings;
      const delta = choice.delta || {};
      if (delta.content || delta.tool_calls) firstMs = firstMs ?? performance.now() - start;
      if (delta.content) {
        text += delta.content;
        answer.textContent = text;
        if (mode === "schema") {
          $("snapshot").textContent = text;
          const v = partialValue(text);
          if (v !== undefined) $("value").textContent = JSON.stringify(v, null, 2);
        }
      }
      for (const call of delta.tool_calls || []) {
        toolCalls.push(call);
        addMessage("tool call", `${call.function.name}(${call.function.arguments})`, "tool-call");
      }
    });
    if (mode === "schema" && text) {
      $("value").textContent = JSON.stringify(JSON.parse(text), null, 2);
      $("value").dataset.final = "true";
    }
    // Tool calls are shown, not run: the conversation keeps the text turns only.
    if (text) state.messages.push({ role: "assistant", content: text });
    else state.messages.pop();
    if (timings && usage) {
      addProfileRow({
        turn, promptTokens: usage.prompt_tokens,
        cachedTokens: usage.prompt_tokens_details ? usage.prompt_tokens_details.cached_tokens : 0,
        prefillMs: timings.prompt_ms, firstTokenMs: firstMs ?? 0, tokens: timings.predicted_n,
        tokensPerSecond: timings.predicted_per_second,
        maskUsPerToken: timings.predicted_n ? 1000 * (timings.mask_ms || 0) / timings.predicted_n : 0,
      });
    }
    status(`done (turn ${turn}${toolCalls.length ? ", " + toolCalls.length + " tool call(s)" : ""})`);
    answer.parentElement.dataset.done = "true";
  } catch (e) {
    state.messages.pop();
    answer.parentElement.className = "message error";
    answer.textContent = e.message;
    status("error");
  } finally {
    state.busy = false;
    $("send").disabled = false;
  }
}

function showMode() {
  const mode = $("mode").value;
  $("schema-panel").hidden = mode !== "schema";
  $("tools-panel").hidden = mode !== "tools";
}

function init() {
  $("schema").value = JSON.stringify(DEFAULT_SCHEMA, null, 2);
  $("tools").value = JSON.stringify(DEFAULT_TOOLS, null, 2);
  $("api-key").value = localStorage.getItem("afm-api-key") || "";
  $("api-key").addEventListener("change", () => {
    localStorage.setItem("afm-api-key", $("api-key").value);
    loadModels();
  });
  $("mode").addEventListener("change", showMode);
  $("clear").addEventListener("click", () => {
    state.messages = [];
    $("messages").replaceChildren();
    status("new conversation");
  });
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const prompt = $("prompt").value.trim();
    if (!prompt || state.busy) return;
    $("prompt").value = "";
    send(prompt);
  });
  $("prompt").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
  });
  showMode();
  loadModels();
}

init();
