// A run's state, folded from its events (mirrors ponder.cli.view.RunView).
"use strict";

export function newRun(id) {
  return {id, status: "running", prompt: "", model: "", workflow: "", round: 0,
          rounds: new Map(), thoughts: [], calls: new Map(), steps: [], plan: null, graph: null,
          notices: [], answer: "", reasoningText: "", usage: null, error: "", stopReason: "",
          pending: null, suspendedFor: null, approvalError: "", lastSeq: 0};
}

function roundOf(run, number) {
  if (!run.rounds.has(number)) run.rounds.set(number, {number, summaries: [], calls: [], thoughts: [], requests: []});
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

function setPlan(run, steps) {
  if (!Array.isArray(steps)) return;
  run.graph = steps.map(s => ({id: String(s.id), description: String(s.description || ""),
                               dependsOn: Array.isArray(s.depends_on) ? s.depends_on.map(String) : [],
                               status: String(s.status || "pending")}));
}

function setStepStatus(run, id, status) {
  const node = run.graph && run.graph.find(s => s.id === id);
  if (node) node.status = status;
}

function addRequest(run, e) {
  const before = run.usage || {requests: 0, input_tokens: 0, output_tokens: 0};
  roundOf(run, run.round).requests.push({
    purpose: e.purpose || "request", latency: e.latency ?? null,
    input: (e.input_tokens || 0) - (before.input_tokens || 0),
    output: (e.output_tokens || 0) - (before.output_tokens || 0)});
  run.usage = {requests: e.requests, input_tokens: e.input_tokens, output_tokens: e.output_tokens,
               cached_input_tokens: e.cached_input_tokens || 0, cost: e.cost ?? before.cost ?? null};
}

// One line for an event of a sub-agent's run, shown under the parent's call.
function childLine(event) {
  switch (event.kind) {
    case "tool_call_started": return `calls ${event.name}`;
    case "tool_call_finished": return `${event.name} ✓`;
    case "tool_call_failed": return `${event.name} ✗ ${event.error || ""}`;
    case "reasoning": return `reasons: ${event.summary}`;
    case "run_finished": return `answers: ${event.output}`;
    case "run_failed": return `fails: ${event.error_type}: ${event.error}`;
    case "run_suspended": return `waits: ${event.reason}`;
    default: return null;  // deltas, usage and the rest stay in the child's own log
  }
}

const handlers = {
  run_started(run, e) { Object.assign(run, {prompt: e.prompt, model: e.model, workflow: e.workflow, status: "running"}); },
  round_started(run, e) { run.round = e.round; roundOf(run, e.round); },
  reasoning(run, e) { roundOf(run, e.round).summaries.push(e.summary); },
  tool_call_started(run, e) {
    const call = {id: e.call_id, name: e.name, args: e.arguments, status: "running", output: "", duration: null};
    run.calls.set(e.call_id, call);
    roundOf(run, run.round).calls.push(call);
  },
  tool_call_finished(run, e) { Object.assign(callOf(run, e), {status: "ok", output: e.output, duration: e.duration}); },
  tool_call_failed(run, e) { Object.assign(callOf(run, e), {status: e.status || "error", output: e.error, duration: e.duration}); },
  thinking(run, e) {
    const thought = thoughtFrom(e.data || {});
    run.thoughts.push(thought);
    roundOf(run, run.round).thoughts.push(thought);
    linkRevision(run, thought);
  },
  todo(run, e) { run.plan = e.data; },
  plan_updated(run, e) { setPlan(run, e.steps); run.notices.push(`plan revision ${e.revision}: ${e.reason}`); },
  plan_replanned(run, e) { run.notices.push(`replanned (${e.trigger}; replaced: ${e.replaced.join(", ") || "none"}): ${e.reason}`); },
  step_started(run, e) {
    run.steps.push({id: e.step_id, description: e.description, index: e.index, total: e.total, status: "running", summary: ""});
    setStepStatus(run, e.step_id, "running");
  },
  step_finished(run, e) {
    const step = [...run.steps].reverse().find(s => s.id === e.step_id);
    if (step) Object.assign(step, {status: e.status, summary: e.summary});
    setStepStatus(run, e.step_id, e.status);
  },
  middle_message(run, e) { run.notices.push("message: " + e.content); },
  reflection(run, e) { run.notices.push(`verify ${e.check_type}: ${e.result}${e.detail ? " — " + e.detail : ""}`); },
  limit_reached(run, e) { run.notices.push(`limit reached: ${e.limit} (${e.value})`); },
  loop_detected(run, e) { run.notices.push(`loop detected (${e.repeats} repeats): ${e.action}`); },
  stall_detected(run, e) { run.notices.push(`step ${e.step_id} stalled (${e.repeats} repeats)`); },
  model_unanswered(run, e) { run.notices.push(`the model gave no answer (${e.reason})${e.retrying ? "; asked again" : ""}`); },
  model_degraded(run, e) { run.notices.push(`${e.model}: no ${e.feature}; ${e.action}`); },
  text_delta(run, e) { run.answer += e.text; },
  answer_withdrawn(run, e) { run.answer = ""; run.notices.push(`answer withdrawn (${e.reason})${e.retrying ? "; asked again" : ""}`); },
  reasoning_delta(run, e) { run.reasoningText += e.text; },
  run_finished(run, e) {
    Object.assign(run, {status: "completed", answer: e.output, stopReason: e.stop_reason});
    if (e.usage && Object.keys(e.usage).length) run.usage = Object.assign({cost: e.cost ?? null}, e.usage);
  },
  run_failed(run, e) {
    Object.assign(run, {status: e.error_type === "Cancelled" ? "cancelled" : "failed", error: `${e.error_type}: ${e.error}`,
                        stopReason: e.error_type === "Cancelled" ? "cancelled" : e.error_type});
  },
  run_suspended(run, e) {
    run.status = "suspended";
    run.suspendedFor = e.reason;
    run.pending = e.reason === "approval" && e.payload && Array.isArray(e.payload.calls) ? e.payload.calls : null;
    run.notices.push("suspended: " + e.reason);
  },
  run_resumed(run) { Object.assign(run, {status: "running", suspendedFor: null, pending: null, approvalError: ""}); run.notices.push("resumed"); },
  run_cancelled(run, e) { run.status = e.resumable ? "interrupted" : "cancelled"; run.pending = null; },
  usage: addRequest,
  sub_agent_event(run, e) {
    const call = callOf(run, {call_id: e.call_id, name: e.agent});
    const line = childLine(e.event || {});
    if (line !== null) (call.children = call.children || []).push(line);
  },
};

function callOf(run, e) {
  if (!run.calls.has(e.call_id)) handlers.tool_call_started(run, {call_id: e.call_id, name: e.name, arguments: null});
  return run.calls.get(e.call_id);
}

export function applyEvent(run, event) {
  if (event.seq <= run.lastSeq) return;  // a replayed event after a reconnect
  run.lastSeq = event.seq;
  const handler = handlers[event.kind];
  if (handler) handler(run, event);
}

export function isEnded(run) {
  return !["running", "suspended"].includes(run.status);
}

// What the run's summary (GET /v1/runs/{id}) knows and its events did not say: a stored
// run replays few or no events. Its outcome is taken only once the event stream has ended.
export function adoptSummary(run, summary, streamEnded) {
  if (!run.prompt) run.prompt = summary.prompt || "";
  if (!streamEnded || isEnded(run) || ["running", "suspended"].includes(summary.status)) return;
  if (!run.usage && summary.usage && Object.keys(summary.usage).length) {
    run.usage = Object.assign({cost: summary.cost ?? null}, summary.usage);
  }
  run.status = summary.status;
  if (!run.answer && summary.output) run.answer = summary.output;
  if (!run.error && summary.error) run.error = summary.error;
  if (!run.stopReason) run.stopReason = summary.stop_reason || "";
}
