// ponder viewer: the runs list, one run live over SSE, and the settings page
// (no build step, no dependencies).
"use strict";

import {EventStream, api, errorOf, setToken, takeTokenFromAddress, token} from "./api.js";
import {age, el} from "./dom.js";
import {adoptSummary, applyEvent, isEnded, newRun} from "./run-state.js";
import {renderRun} from "./run-view.js";
import {SettingsPage} from "./settings.js";

takeTokenFromAddress();

let stream = null;
let current = null;
let pending = false;
let runs = [];
const settings = new SettingsPage(document.getElementById("settings-page"));

function scheduleRender() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => { pending = false; if (current) showRun(current); });
}

function showRun(run) {
  document.getElementById("run").replaceChildren(...renderRun(run, {
    cancel: () => api(`/v1/runs/${run.id}/cancel`, {method: "POST"}),
    decide: decision => decide(run, decision),
  }));
  // for elicitation.js: the shown run, once the server has answered for it
  window.dispatchEvent(new CustomEvent("ponder:run", {detail: {id: run.id, status: run.status, reason: run.suspendedFor}}));
}

async function decide(run, decision) {
  for (const id of ["approve", "reject"]) document.getElementById(id).disabled = true;
  const response = await api(`/v1/runs/${run.id}/resume`, {method: "POST", body: JSON.stringify({decision})});
  if (!response.ok) run.approvalError = (await errorOf(response)).message;
  scheduleRender();
}

function setConnection(state) {
  const badge = document.getElementById("connection");
  badge.dataset.state = state;
  badge.textContent = state;
  if (state === "token needed") needToken();
}

function needToken() {
  document.getElementById("sign-in").hidden = false;
  document.getElementById("token-input").focus();
}

function openRun(id) {
  if (stream) stream.close();
  current = newRun(id);
  showRun(current);
  const run = current;
  stream = new EventStream(`/v1/runs/${encodeURIComponent(id)}/events`, {
    onEvent: event => {
      applyEvent(run, event);
      if (event.kind === "run_finished" || event.kind === "run_failed") refreshRuns();
      scheduleRender();
    },
    onState: setConnection,
    isDone: async () => isEnded(run) || (await summarize(run, true), isEnded(run)),
  });
  summarize(run, false);
  markSelected();
}

async function summarize(run, streamEnded) {
  const response = await api(`/v1/runs/${encodeURIComponent(run.id)}`);
  if (!response.ok) return;
  adoptSummary(run, await response.json(), streamEnded);
  scheduleRender();
}

function markSelected() {
  for (const item of document.querySelectorAll("#runs li")) {
    const selected = current !== null && item.dataset.runId === current.id;
    item.classList.toggle("selected", selected);
    if (selected) item.setAttribute("aria-current", "true"); else item.removeAttribute("aria-current");
  }
}

function tokens(usage) {
  if (!usage || !Object.keys(usage).length) return "—";
  return `${(usage.input_tokens || 0) + (usage.output_tokens || 0)} tok`;
}

function runItem(r) {
  const go = () => { location.hash = `run=${r.id}`; };
  const reason = r.stop_reason || (r.status === "failed" && r.error ? r.error.split(":")[0] : "");
  return el("li", {dataRunId: r.id, dataStatus: r.status, dataTestid: "run-item", role: "link", tabindex: 0,
                   title: r.prompt, onclick: go, onkeydown: e => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); } }},
    el("div", {class: "run-line"}, el("span", {class: "badge " + r.status}, r.status),
      el("span", {class: "run-prompt"}, r.prompt.slice(0, 80))),
    el("div", {class: "run-meta muted"},
      el("span", {dataTestid: "run-reason"}, reason || "—"),
      el("span", {dataTestid: "run-age"}, age(r.created)),
      el("span", {dataTestid: "run-tokens"}, tokens(r.usage))));
}

function showRuns() {
  const wanted = document.getElementById("status-filter").value;
  const shown = runs.filter(r => !wanted || r.status === wanted);
  document.getElementById("runs").replaceChildren(...(shown.length ? shown.map(runItem)
    : [el("li", {class: "muted empty"}, wanted ? `no ${wanted} runs` : "no runs yet")]));
  markSelected();
}

async function refreshRuns() {
  const response = await api("/v1/runs?limit=100");
  if (!response.ok) { setConnection(response.status === 401 ? "token needed" : "error"); return; }
  runs = (await response.json()).runs;
  document.getElementById("sign-in").hidden = true;
  document.getElementById("sign-out").hidden = !token();
  showRuns();
}

function route() {
  const params = new URLSearchParams(location.hash.slice(1));
  const onSettings = location.hash === "#settings";
  document.getElementById("settings-page").hidden = !onSettings;
  document.getElementById("runs-page").hidden = onSettings;
  document.getElementById("nav-settings").classList.toggle("active", onSettings);
  document.getElementById("nav-runs").classList.toggle("active", !onSettings);
  if (onSettings) { settings.load(); return; }
  const id = params.get("run");
  if (id && (!current || current.id !== id)) openRun(id);
}

document.getElementById("new-run").addEventListener("submit", async event => {
  event.preventDefault();
  const errorBox = document.getElementById("form-error");
  const prompt = document.getElementById("prompt").value;
  const response = await api("/v1/runs", {method: "POST", body: JSON.stringify({prompt})});
  if (!response.ok) { errorBox.hidden = false; errorBox.textContent = (await errorOf(response)).message; return; }
  const body = await response.json();
  errorBox.hidden = true;
  location.hash = `run=${body.id}`;
  refreshRuns();
});

document.getElementById("sign-in").addEventListener("submit", event => {
  event.preventDefault();
  setToken(document.getElementById("token-input").value.trim());
  document.getElementById("token-input").value = "";
  current = null;
  refreshRuns().then(route);
});

document.getElementById("sign-out").addEventListener("click", () => {
  setToken(null);
  if (stream) stream.close();
  location.reload();
});

document.getElementById("status-filter").addEventListener("change", showRuns);
window.addEventListener("hashchange", route);
refreshRuns().then(route);
setInterval(refreshRuns, 3000);
