// ponder viewer: lists runs and shows one live over SSE (no build step, no dependencies).
"use strict";

const params = new URLSearchParams(location.hash.slice(1));
if (params.get("token")) sessionStorage.setItem("ponder-token", params.get("token"));
const token = sessionStorage.getItem("ponder-token");

function api(path, options = {}) {
  const headers = Object.assign({"content-type": "application/json"}, options.headers || {});
  if (token) headers.authorization = "Bearer " + token;
  return fetch(path, Object.assign({}, options, {headers}));
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("data")) node.setAttribute(key.replace(/[A-Z]/g, c => "-" + c.toLowerCase()), String(value));
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// ---- run state, folded from events (mirrors ponder.cli.view.RunView) ----

function newRun(id) {
  return {id, status: "running", prompt: "", model: "", workflow: "", round: 0,
          rounds: new Map(), thoughts: [], calls: new Map(), steps: [], plan: null,
          notices: [], answer: "", reasoningText: "", usage: null, error: "", stopReason: "",
          pending: null, approvalError: "", lastSeq: 0};
}

function roundOf(run, number) {
  if (!run.rounds.has(number)) run.rounds.set(number, {number, summaries: [], calls: [], thoughts: []});
  return run.rounds.get(number);
}

function thoughtFrom(data) {
  const node = (data && typeof data.node === "object" && data.node) || {};
  return {
    seq: node.seq || data.thought_history_length || 0,
    number: data.thought_number, total: data.total_thoughts, text: String(data.thought || ""),
    branchId: node.branch_id || null, branchFrom: node.branch_from_thought || null,
    revises: node.is_revision ? node.revises_thought : null,
    revisionType: node.is_revision ? node.revision_type : null,
    supersedes: node.supersedes || null, supersededBy: null,
    warnings: Array.isArray(data.warnings) ? data.warnings : [],
    incomplete: Boolean(data.incomplete_steps),
  };
}

function linkRevision(run, thought) {
  if (thought.revises === null || thought.revisionType === "amend") return;
  for (let i = run.thoughts.length - 2; i >= 0; i--) {
    const earlier = run.thoughts[i];
    const found = thought.supersedes ? earlier.seq === thought.supersedes
      : earlier.number === thought.revises && earlier.supersededBy === null;
    if (found) { earlier.supersededBy = thought.seq; return; }
  }
}

const handlers = {
  run_started(run, e) { Object.assign(run, {prompt: e.prompt, model: e.model, workflow: e.workflow, status: "running"}); },
  round_started(run, e) { run.round = e.round; roundOf(run, e.round); },
  reasoning(run, e) { roundOf(run, e.round).summaries.push(e.summary); },
  tool_call_started(run, e) {
    const call = {id: e.call_id, name: e.name, args: e.arguments, status: "running", output: "", duration: null, round: run.round};
    run.calls.set(e.call_id, call);
    roundOf(run, run.round).calls.push(call);
  },
  tool_call_finished(run, e) { Object.assign(callOf(run, e), {status: "ok", output: e.output, duration: e.duration}); },
  tool_call_failed(run, e) { Object.assign(callOf(run, e), {status: e.status || "error", output: e.error, duration: e.duration}); },
  thinking(run, e) {
    const thought = thoughtFrom(e.data || {});
    thought.round = run.round;
    run.thoughts.push(thought);
    roundOf(run, run.round).thoughts.push(thought);
    linkRevision(run, thought);
  },
  todo(run, e) { run.plan = e.data; },
  plan_updated(run, e) { run.notices.push(`plan revision ${e.revision}: ${e.reason}`); },
  plan_replanned(run, e) { run.notices.push(`replanned (${e.trigger}; replaced: ${e.replaced.join(", ") || "none"}): ${e.reason}`); },
  step_started(run, e) { run.steps.push({id: e.step_id, description: e.description, index: e.index, total: e.total, status: "running", summary: ""}); },
  step_finished(run, e) {
    const step = [...run.steps].reverse().find(s => s.id === e.step_id);
    if (step) Object.assign(step, {status: e.status, summary: e.summary});
  },
  middle_message(run, e) { run.notices.push("message: " + e.content); },
  reflection(run, e) { run.notices.push(`verify ${e.check_type}: ${e.result}${e.detail ? " — " + e.detail : ""}`); },
  limit_reached(run, e) { run.notices.push(`limit reached: ${e.limit} (${e.value})`); },
  loop_detected(run, e) { run.notices.push(`loop detected (${e.repeats} repeats): ${e.action}`); },
  stall_detected(run, e) { run.notices.push(`step ${e.step_id} stalled (${e.repeats} repeats)`); },
  text_delta(run, e) { run.answer += e.text; },
  reasoning_delta(run, e) { run.reasoningText += e.text; },
  run_finished(run, e) { Object.assign(run, {status: "completed", answer: e.output, usage: e.usage, stopReason: e.stop_reason}); },
  run_failed(run, e) { Object.assign(run, {status: e.error_type === "Cancelled" ? "cancelled" : "failed", error: `${e.error_type}: ${e.error}`}); },
  run_suspended(run, e) {
    run.status = "suspended";
    run.pending = e.reason === "approval" && e.payload && Array.isArray(e.payload.calls) ? e.payload.calls : null;
    run.notices.push("suspended: " + e.reason);
  },
  run_resumed(run) { Object.assign(run, {status: "running", pending: null, approvalError: ""}); run.notices.push("resumed"); },
  run_cancelled(run, e) { run.status = e.resumable ? "interrupted" : "cancelled"; run.pending = null; },
  usage(run, e) { run.usage = {requests: e.requests, input_tokens: e.input_tokens, output_tokens: e.output_tokens}; },
};

function callOf(run, e) {
  if (!run.calls.has(e.call_id)) handlers.tool_call_started(run, {call_id: e.call_id, name: e.name, arguments: null});
  return run.calls.get(e.call_id);
}

function applyEvent(run, event) {
  if (event.seq <= run.lastSeq) return;  // a replayed event after a reconnect
  run.lastSeq = event.seq;
  const handler = handlers[event.kind];
  if (handler) handler(run, event);
}

// ---- rendering ----

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "";
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(2)} s`;
}

function json(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function thoughtItem(t) {
  const superseded = t.supersededBy !== null;
  return el("li", {class: "thought" + (superseded ? " superseded" : "") + (t.revises !== null ? " revision" : ""),
                   dataNumber: t.number, dataSeq: t.seq, dataBranch: t.branchId || "",
                   dataSuperseded: superseded ? "true" : "false", dataTestid: "thought"},
    el("span", {class: "num"}, `${t.number}/${t.total}`),
    el("span", {class: "text"}, t.text),
    t.revises !== null ? el("span", {class: "tag revises"}, `↻ ${t.revisionType === "amend" ? "amends" : "revises"} ${t.revises}`) : null,
    superseded ? el("span", {class: "tag"}, "superseded") : null,
    t.warnings.length ? el("span", {class: "tag warn", title: t.warnings.join("\n")}, `⚠ ${t.warnings.length}`) : null);
}

function thinkingTree(run) {
  if (!run.thoughts.length) return null;
  const last = run.thoughts[run.thoughts.length - 1];
  const main = el("ol", {class: "tree", dataTestid: "thinking-tree"});
  const anchors = new Map();
  for (const t of run.thoughts.filter(t => !t.branchId)) {
    const item = thoughtItem(t);
    main.append(item);
    if (!anchors.has(t.number)) anchors.set(t.number, item);
  }
  const branchIds = [...new Set(run.thoughts.filter(t => t.branchId).map(t => t.branchId))];
  for (const id of branchIds) {
    const thoughts = run.thoughts.filter(t => t.branchId === id);
    const box = el("div", {class: "branch", dataBranchId: id, dataTestid: "branch"},
      el("div", {class: "branch-label"}, `↳ branch ${id} (from ${thoughts[0].branchFrom ?? "?"})`),
      el("ol", {class: "tree"}, thoughts.map(thoughtItem)));
    (anchors.get(thoughts[0].branchFrom) || main).append(box);
  }
  const done = !last.incomplete || run.status !== "running";
  return el("section", {class: "panel thinking"},
    el("h3", {}, "Thinking ", el("span", {class: "progress", dataTestid: "thought-progress"}, `${last.number}/${last.total}`)),
    el("progress", {max: last.total, value: last.number}),
    done ? null : el("span", {class: "muted"}, " thinking…"),
    main);
}

function callRow(call) {
  return el("tr", {class: "tool-call", dataStatus: call.status, dataName: call.name, dataTestid: "tool-call"},
    el("td", {class: "status"}, {running: "…", ok: "✓"}[call.status] || "✗"),
    el("td", {class: "name"}, call.name),
    el("td", {}, el("pre", {class: "args"}, json(call.args))),
    el("td", {}, el("pre", {class: call.status === "ok" || call.status === "running" ? "result" : "result error"}, call.output)),
    el("td", {class: "time"}, duration(call.duration)));
}

function roundSection(round) {
  const calls = round.calls.filter(c => !(["sequential_thinking", "todo_write"].includes(c.name) && c.status === "ok"));
  return el("li", {class: "round", dataRound: round.number, dataTestid: "round"},
    el("h4", {}, `Round ${round.number}`),
    round.summaries.map(s => el("p", {class: "summary", dataTestid: "summary"}, s)),
    round.thoughts.length ? el("p", {class: "muted"}, `${round.thoughts.length} thought(s) recorded`) : null,
    calls.length ? el("table", {class: "calls"}, el("tbody", {}, calls.map(callRow))) : null);
}

function planPanel(plan) {
  if (!plan) return null;
  const steps = Array.isArray(plan.steps) ? plan.steps : [];
  return el("section", {class: "panel plan", dataTestid: "plan"},
    el("h3", {}, `Plan · ${plan.completed ?? 0}/${plan.total ?? steps.length} done`),
    el("p", {}, plan.task || ""),
    el("ul", {}, steps.map(s => el("li", {class: "plan-step " + s.status, dataStatus: s.status}, s.description))));
}

function stepsPanel(run) {
  if (!run.steps.length) return null;
  return el("section", {class: "panel steps"}, el("h3", {}, "Steps"),
    el("ol", {}, run.steps.map(s => el("li", {class: "step " + s.status, dataStatus: s.status},
      `${s.index}/${s.total} ${s.description}${s.summary ? " — " + s.summary : ""}`))));
}

function approvalPanel(run) {
  if (run.status !== "suspended" || !run.pending) return null;
  return el("section", {class: "panel approval", dataTestid: "approval"},
    el("h3", {}, "Waiting for approval"),
    el("table", {class: "calls"}, el("tbody", {}, run.pending.map(call =>
      el("tr", {class: "pending-call", dataName: call.name, dataCallId: call.id, dataTestid: "pending-call"},
        el("td", {class: "name"}, call.name),
        el("td", {}, el("pre", {class: "args"}, json(call.arguments))))))),
    el("div", {class: "actions"},
      el("button", {id: "approve", type: "button", dataTestid: "approve"}, "Approve"),
      el("button", {id: "reject", type: "button", dataTestid: "reject"}, "Reject")),
    run.approvalError ? el("p", {class: "error", dataTestid: "approval-error"}, run.approvalError) : null);
}

async function decide(run, decision) {
  for (const id of ["approve", "reject"]) document.getElementById(id).disabled = true;
  const response = await api(`/v1/runs/${run.id}/resume`, {method: "POST", body: JSON.stringify({decision})});
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    run.approvalError = body.error ? body.error.message : `resume failed (HTTP ${response.status})`;
  }
  scheduleRender();
}

function usageLine(usage) {
  if (!usage) return "tokens: reported when the run ends";
  const total = (usage.input_tokens || 0) + (usage.output_tokens || 0);
  return `tokens: in ${usage.input_tokens || 0} · out ${usage.output_tokens || 0} · total ${total} · ${usage.requests || 0} request(s)`;
}

function renderRun(run) {
  const current = run.steps.length ? run.steps[run.steps.length - 1] : null;
  const last = run.thoughts[run.thoughts.length - 1];
  const status = [run.round ? `round ${run.round}` : null, current ? `step ${current.index}/${current.total}` : null,
                  last ? `thought ${last.number}/${last.total}` : null].filter(Boolean).join(" · ");
  const main = document.getElementById("run");
  main.replaceChildren(...[
    el("div", {class: "run-head"},
      el("span", {class: "badge " + run.status, dataTestid: "run-status"}, run.status),
      el("span", {class: "progress-line"}, status),
      el("span", {class: "muted"}, `${run.model} · ${run.workflow} · ${run.id.slice(0, 8)}`),
      ["running", "suspended"].includes(run.status) ? el("button", {id: "cancel", type: "button"}, "Cancel") : null),
    el("p", {class: "prompt"}, run.prompt),
    approvalPanel(run),
    el("div", {class: "columns"},
      el("div", {class: "timeline"}, el("h3", {}, "Timeline"),
        el("ol", {class: "rounds", dataTestid: "timeline"}, [...run.rounds.values()].map(roundSection))),
      el("div", {class: "side"}, thinkingTree(run), planPanel(run.plan), stepsPanel(run),
        run.reasoningText ? el("section", {class: "panel"}, el("h3", {}, "Model reasoning"), el("pre", {}, run.reasoningText)) : null)),
    run.notices.length ? el("ul", {class: "notices"}, run.notices.map(n => el("li", {}, n))) : null,
    run.answer ? el("section", {class: "panel answer"}, el("h3", {}, "Answer"), el("div", {id: "answer", dataTestid: "answer"}, run.answer)) : null,
    run.error ? el("p", {class: "error", dataTestid: "run-error"}, run.error) : null,
    el("p", {class: "usage", dataTestid: "usage"}, usageLine(run.usage))].filter(Boolean));
  const cancel = document.getElementById("cancel");
  if (cancel) cancel.onclick = () => api(`/v1/runs/${run.id}/cancel`, {method: "POST"});
  const approve = document.getElementById("approve");
  if (approve) approve.onclick = () => decide(run, "approve");
  const reject = document.getElementById("reject");
  if (reject) reject.onclick = () => decide(run, "reject");
}

// ---- live connection ----

let source = null;
let current = null;
let pending = false;

function scheduleRender() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => { pending = false; if (current) renderRun(current); });
}

function setConnection(state) {
  const badge = document.getElementById("connection");
  badge.dataset.state = state;
  badge.textContent = state;
}

function openRun(id) {
  if (source) source.close();
  current = newRun(id);
  renderRun(current);
  const query = token ? `?access_token=${encodeURIComponent(token)}` : "";
  source = new EventSource(`/v1/runs/${encodeURIComponent(id)}/events${query}`);
  setConnection("connecting");
  source.onopen = () => setConnection("live");
  source.onmessage = () => {};
  source.onerror = () => setConnection(current && current.status !== "running" ? "ended" : "reconnecting");
  for (const kind of Object.keys(handlers).concat(["checkpoint_written", "compaction", "structured_reasoning", "tool_prediction"])) {
    source.addEventListener(kind, message => {
      const event = JSON.parse(message.data);
      applyEvent(current, event);
      if (event.kind === "run_finished" || event.kind === "run_failed") { source.close(); setConnection("ended"); refreshRuns(); }
      scheduleRender();
    });
  }
  for (const item of document.querySelectorAll("#runs li")) item.classList.toggle("selected", item.dataset.runId === id);
}

async function refreshRuns() {
  const response = await api("/v1/runs?limit=100");
  if (!response.ok) { setConnection(response.status === 401 ? "token needed (#token=…)" : "error"); return; }
  const {runs} = await response.json();
  const selected = current ? current.id : null;
  document.getElementById("runs").replaceChildren(...runs.map(r =>
    el("li", {class: r.id === selected ? "selected" : "", dataRunId: r.id, dataStatus: r.status, dataTestid: "run-item"},
      el("a", {href: `#run=${r.id}`}, el("span", {class: "badge " + r.status}, r.status), " ", r.prompt.slice(0, 80)))));
}

function route() {
  const id = new URLSearchParams(location.hash.slice(1)).get("run");
  if (id && (!current || current.id !== id)) openRun(id);
}

document.getElementById("new-run").addEventListener("submit", async event => {
  event.preventDefault();
  const errorBox = document.getElementById("form-error");
  const prompt = document.getElementById("prompt").value;
  const response = await api("/v1/runs", {method: "POST", body: JSON.stringify({prompt})});
  const body = await response.json();
  if (!response.ok) { errorBox.hidden = false; errorBox.textContent = body.error ? body.error.message : "failed"; return; }
  errorBox.hidden = true;
  location.hash = `run=${body.id}`;
  refreshRuns();
});

window.addEventListener("hashchange", route);
refreshRuns().then(route);
setInterval(refreshRuns, 3000);
