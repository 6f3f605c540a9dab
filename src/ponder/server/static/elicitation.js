// ponder viewer: an MCP server's questions to the selected run, answered with a form built
// from the requested schema (form mode) or a link to open (URL mode: only an http(s) URL is
// a link, any other is shown as text; links.js decides). Needs only links.js: it follows
// the run the viewer shows (its "ponder:run" events), lists that run's questions from
// GET /v1/runs/{id}/elicitations while it runs or waits for an answer, and answers with
// POST /v1/runs/{id}/elicitations/{eid}.
"use strict";

(() => {
  const POLL_MS = 1500;
  const box = document.createElement("section");
  box.id = "elicitation";
  box.className = "panel elicitation";
  box.dataset.testid = "elicitation";
  box.hidden = true;
  (document.querySelector("header.top") || document.body.firstChild).after(box);

  let shown = "";

  function call(path, options = {}) {
    const headers = {"content-type": "application/json"};
    const token = sessionStorage.getItem("ponder-token");
    if (token) headers.authorization = "Bearer " + token;
    return fetch(path, Object.assign({}, options, {headers}));
  }

  function node(tag, attrs = {}, ...children) {
    const made = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") made.textContent = value;
      else made.setAttribute(key, value === true ? "" : String(value));
    }
    made.append(...children.filter(c => c !== null && c !== undefined));
    return made;
  }

  let shownRun = null;  // {id, status, reason} of the run on the page

  function runId() {
    const run = shownRun;
    const asking = run && (run.status === "running" || (run.status === "suspended" && run.reason === "elicitation"));
    return asking ? run.id : null;
  }

  function field(key, spec, required) {
    const label = (spec.title || key) + (required ? " *" : "");
    const id = "elicit-" + key;
    let input;
    if (Array.isArray(spec.enum) || Array.isArray(spec.oneOf)) {
      const options = spec.enum ? spec.enum.map(v => [v, v]) : spec.oneOf.map(o => [o.const, o.title || o.const]);
      input = node("select", {id, name: key}, required ? null : node("option", {value: "", text: "—"}),
        ...options.map(([value, text]) => node("option", {value, text, selected: spec.default === value})));
    } else if (spec.type === "array" && spec.items && Array.isArray(spec.items.enum)) {
      input = node("select", {id, name: key, multiple: true},
        ...spec.items.enum.map(v => node("option", {value: v, text: v})));
    } else if (spec.type === "boolean") {
      input = node("input", {id, name: key, type: "checkbox", checked: spec.default === true});
    } else {
      const number = spec.type === "number" || spec.type === "integer";
      const kind = number ? "number" : spec.format === "email" ? "email" : spec.format === "uri" ? "url"
        : spec.format === "date" ? "date" : "text";
      input = node("input", {id, name: key, type: kind, step: spec.type === "integer" ? "1" : number ? "any" : null,
        min: spec.minimum, max: spec.maximum, value: spec.default, required});
    }
    input.dataset.type = spec.type || "string";
    return node("p", {class: "field"}, node("label", {for: id, text: label}), " ", input,
      spec.description ? node("small", {class: "muted", text: " " + spec.description}) : null);
  }

  function content(form, schema) {
    const found = {};
    for (const [key, spec] of Object.entries(schema.properties || {})) {
      const input = form.elements.namedItem(key);
      if (!input) continue;
      if (spec.type === "boolean") { found[key] = input.checked; continue; }
      if (input.multiple) { found[key] = [...input.selectedOptions].map(o => o.value); continue; }
      if (input.value === "") continue;
      found[key] = spec.type === "integer" || spec.type === "number" ? Number(input.value) : input.value;
    }
    return found;
  }

  function question(run, q) {
    const error = node("p", {class: "error", "data-testid": "elicitation-error", hidden: true});
    const form = node("form", {"data-testid": "elicitation-form", "data-id": q.id, novalidate: true});
    const required = new Set((q.schema && q.schema.required) || []);
    if (q.mode === "url") {
      const href = window.ponderLinks.httpUrl(q.url);  // never a "javascript:" link
      form.append(node("p", {}, href
        ? node("a", {href, target: "_blank", rel: "noopener noreferrer", text: q.url})
        : node("code", {"data-testid": "elicitation-url", text: String(q.url)})));
    } else {
      for (const [key, spec] of Object.entries((q.schema && q.schema.properties) || {})) {
        form.append(field(key, spec, required.has(key)));
      }
    }
    const button = (action, text) => node("button", {type: action === "accept" ? "submit" : "button",
      "data-action": action, text});
    const actions = node("p", {class: "actions"}, button("accept", q.mode === "url" ? "Done" : "Send"),
      button("decline", "Decline"), button("cancel", "Cancel"));
    form.append(actions, error);
    const answer = async action => {
      const body = {action};
      if (action === "accept" && q.mode !== "url") body.content = content(form, q.schema || {});
      for (const b of actions.querySelectorAll("button")) b.disabled = true;
      const response = await call(`/v1/runs/${encodeURIComponent(run)}/elicitations/${encodeURIComponent(q.id)}`,
        {method: "POST", body: JSON.stringify(body)});
      for (const b of actions.querySelectorAll("button")) b.disabled = false;
      if (response.ok) { form.remove(); shown = ""; setTimeout(poll, 300); return; }
      const reply = await response.json().catch(() => ({}));
      error.hidden = false;
      error.textContent = (reply.error && reply.error.message) || reply.detail || `HTTP ${response.status}`;
    };
    form.addEventListener("submit", event => { event.preventDefault(); answer("accept"); });
    actions.querySelector("[data-action=decline]").onclick = () => answer("decline");
    actions.querySelector("[data-action=cancel]").onclick = () => answer("cancel");
    return node("div", {class: "question"},
      node("h3", {text: `${q.server || "MCP server"} asks`}),
      node("p", {class: "message", "data-testid": "elicitation-message", text: q.message}), form);
  }

  async function poll() {
    const run = runId();
    if (!run) { box.hidden = true; shown = ""; return; }
    const response = await call(`/v1/runs/${encodeURIComponent(run)}/elicitations`).catch(() => null);
    if (!response || !response.ok) return;
    const questions = (await response.json()).data || [];
    const key = run + ":" + questions.map(q => q.id).join(",");
    if (key === shown) return;  // unchanged: keep what the user is typing
    shown = key;
    box.replaceChildren(...questions.map(q => question(run, q)));
    box.hidden = questions.length === 0;
  }

  window.addEventListener("ponder:run", event => {
    const changed = !shownRun || shownRun.id !== event.detail.id || shownRun.status !== event.detail.status;
    shownRun = event.detail;
    if (changed) poll();
  });
  setInterval(poll, POLL_MS);
})();
