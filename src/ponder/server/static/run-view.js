// Rendering one run: its rounds (reasoning, tool calls, model requests), the thinking
// tree, the plan as a DAG, the approval panel and the usage line.
"use strict";

import {duration, el, json} from "./dom.js";
import {planGraph} from "./plan-graph.js";

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
  const failed = !["ok", "running"].includes(call.status);
  return el("div", {class: "tool-call", dataStatus: call.status, dataName: call.name, dataTestid: "tool-call"},
    el("div", {class: "call-head"},
      el("span", {class: "status"}, {running: "…", ok: "✓"}[call.status] || "✗"),
      el("span", {class: "name"}, call.name),
      failed ? el("span", {class: "tag bad"}, call.status) : null,
      el("span", {class: "time", dataTestid: "call-time"}, duration(call.duration))),
    el("pre", {class: "args", dataTestid: "call-args"}, json(call.args)),
    call.children ? el("ul", {class: "sub-agent", dataTestid: "sub-agent-events"},
      call.children.map(line => el("li", {}, line))) : null,
    call.status === "running" ? null
      : el("pre", {class: failed ? "result error" : "result", dataTestid: failed ? "call-error" : "call-result"}, call.output));
}

function requestRow(request) {
  return el("li", {class: "request", dataTestid: "model-request", dataPurpose: request.purpose},
    el("span", {class: "name"}, request.purpose),
    el("span", {class: "time"}, request.latency === null ? "" : duration(request.latency)),
    el("span", {class: "muted"}, `${request.input} in · ${request.output} out`));
}

const QUIET = ["sequential_thinking", "todo_write"];

function roundSection(round) {
  const calls = round.calls.filter(c => !(QUIET.includes(c.name) && c.status === "ok"));
  return el("li", {class: "round", dataRound: round.number, dataTestid: "round"},
    el("h4", {}, round.number ? `Round ${round.number}` : "Before the first round"),
    round.requests.length ? el("ul", {class: "requests"}, round.requests.map(requestRow)) : null,
    round.summaries.map(s => el("p", {class: "summary", dataTestid: "summary"}, s)),
    round.thoughts.length ? el("p", {class: "muted"}, `${round.thoughts.length} thought(s) recorded`) : null,
    calls.length ? el("div", {class: "calls"}, calls.map(callRow)) : null);
}

function todoPanel(plan) {
  if (!plan) return null;
  const steps = Array.isArray(plan.steps) ? plan.steps : [];
  return el("section", {class: "panel plan", dataTestid: "plan"},
    el("h3", {}, `Todo · ${plan.completed ?? 0}/${plan.total ?? steps.length} done`),
    el("p", {}, plan.task || ""),
    el("ul", {}, steps.map(s => el("li", {class: "plan-step " + s.status, dataStatus: s.status}, s.description))));
}

function stepsPanel(run) {
  if (!run.steps.length) return null;
  return el("section", {class: "panel steps"}, el("h3", {}, "Steps"),
    el("ol", {}, run.steps.map(s => el("li", {class: "step " + s.status, dataStatus: s.status},
      `${s.index}/${s.total} ${s.description}${s.summary ? " — " + s.summary : ""}`))));
}

function approvalPanel(run, decide) {
  if (run.status !== "suspended" || !run.pending) return null;
  return el("section", {class: "panel approval", dataTestid: "approval"},
    el("h3", {}, "Waiting for approval"),
    run.pending.map(call =>
      el("div", {class: "pending-call", dataName: call.name, dataCallId: call.id, dataTestid: "pending-call"},
        el("span", {class: "name"}, call.name), el("pre", {class: "args"}, json(call.arguments)))),
    el("div", {class: "actions"},
      el("button", {id: "approve", type: "button", dataTestid: "approve", onclick: () => decide("approve")}, "Approve"),
      el("button", {id: "reject", type: "button", dataTestid: "reject", onclick: () => decide("reject")}, "Reject")),
    run.approvalError ? el("p", {class: "error", dataTestid: "approval-error"}, run.approvalError) : null);
}

export function usageLine(run) {
  const usage = run.usage;
  const ended = !["running", "suspended"].includes(run.status);
  if (!usage) return ended ? `${run.status} · no usage recorded` : "tokens: counted after each model response";
  const total = (usage.input_tokens || 0) + (usage.output_tokens || 0);
  const price = typeof usage.cost === "number" ? ` · $${usage.cost.toFixed(4)}` : "";  // unknown price: tokens only
  const cached = usage.cached_input_tokens ? ` (${usage.cached_input_tokens} cached)` : "";
  const line = `tokens: in ${usage.input_tokens || 0}${cached} · out ${usage.output_tokens || 0} · total ${total} · ${usage.requests || 0} request(s)${price}`;
  return ended ? `${run.status}${run.stopReason ? " (" + run.stopReason + ")" : ""} · ${line}` : line;
}

export function renderRun(run, {cancel, decide}) {
  const current = run.steps.length ? run.steps[run.steps.length - 1] : null;
  const last = run.thoughts[run.thoughts.length - 1];
  const progress = [run.round ? `round ${run.round}` : null, current ? `step ${current.index}/${current.total}` : null,
                    last ? `thought ${last.number}/${last.total}` : null].filter(Boolean).join(" · ");
  const active = ["running", "suspended"].includes(run.status);
  return [
    el("div", {class: "run-head"},
      el("span", {class: "badge " + run.status, dataTestid: "run-status"}, run.status),
      el("span", {class: "progress-line"}, progress),
      el("span", {class: "muted"}, [run.model, run.workflow, run.id.slice(0, 8)].filter(Boolean).join(" · ")),
      active ? el("button", {id: "cancel", type: "button", onclick: cancel}, "Cancel") : null),
    el("p", {class: "prompt"}, run.prompt),
    approvalPanel(run, decide),
    el("div", {class: "columns"},
      el("div", {class: "timeline"}, el("h3", {}, "Timeline"),
        el("ol", {class: "rounds", dataTestid: "timeline"}, [...run.rounds.values()].map(roundSection))),
      el("div", {class: "side"}, planGraph(run.graph), thinkingTree(run), todoPanel(run.plan), stepsPanel(run),
        run.reasoningText ? el("section", {class: "panel"}, el("h3", {}, "Model reasoning"), el("pre", {}, run.reasoningText)) : null)),
    run.notices.length ? el("ul", {class: "notices"}, run.notices.map(n => el("li", {}, n))) : null,
    run.answer ? el("section", {class: "panel answer"}, el("h3", {}, "Answer"), el("div", {id: "answer", dataTestid: "answer"}, run.answer)) : null,
    run.error ? el("p", {class: "error", dataTestid: "run-error"}, run.error) : null,
    el("p", {class: "usage", dataTestid: "usage"}, usageLine(run)),
  ].filter(Boolean);
}
