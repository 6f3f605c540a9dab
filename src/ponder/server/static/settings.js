// The settings page: the configuration new runs get, grouped the spec's way, edited over
// PATCH /v1/config (validated by the server with the config loader's messages).
"use strict";

import {api, errorOf} from "./api.js";
import {el, json, richText} from "./dom.js";

function constraint(key) {
  const parts = [];
  if (key.choices.length) parts.push("one of " + key.choices.join(", "));
  const names = {ge: "≥", gt: ">", le: "≤", lt: "<"};
  for (const [name, value] of Object.entries(key.bounds)) parts.push(`${names[name]} ${value}`);
  if (key.nullable) parts.push("may be unset");
  return parts.join(" · ");
}

function input(key) {
  const common = {id: "cfg-" + key.key, name: key.key, dataKey: key.key, dataTestid: "config-input"};
  if (key.kind === "bool") return el("input", Object.assign({type: "checkbox", checked: key.value === true}, common));
  if (key.kind === "choice") {
    return el("select", common, key.choices.map(c => el("option", {value: c, selected: c === key.value}, c)));
  }
  if (key.secret) return el("input", Object.assign({type: "password", autocomplete: "off", placeholder: key.value ? "set (hidden)" : "unset"}, common));
  if (key.kind === "list" || key.kind === "table") {
    return el("textarea", Object.assign({rows: 2, spellcheck: "false"}, common), JSON.stringify(key.value));
  }
  const number = key.kind === "int" || key.kind === "float";
  return el("input", Object.assign({type: number ? "number" : "text", step: key.kind === "float" ? "any" : "1",
                                    value: key.value === null ? "" : String(key.value),
                                    placeholder: key.value === null ? "unset" : null}, common));
}

function readInput(node, key) {
  if (key.kind === "bool") return node.checked;
  const raw = node.value;
  if (key.kind === "choice") return raw;
  if (raw.trim() === "") return key.nullable || key.secret ? null : raw;
  if (key.kind === "int" || key.kind === "float") return Number.isFinite(Number(raw)) ? Number(raw) : raw;
  if (key.kind === "list" || key.kind === "table") {
    try { return JSON.parse(raw); } catch { throw {param: key.key, message: `${key.key}: not valid JSON`}; }
  }
  return raw;
}

function keyRow(key, error) {
  const meta = [`default ${key.secret ? "unset" : json(key.default)}`, constraint(key)].filter(Boolean).join(" · ");
  return el("div", {class: "config-key" + (error ? " invalid" : ""), dataKey: key.key, dataTestid: "config-key",
                    dataDefault: key.is_default ? "true" : "false"},
    el("label", {for: "cfg-" + key.key}, el("code", {}, key.key)),
    input(key),
    el("p", {class: "description"}, richText(key.description)),
    el("p", {class: "muted meta"}, meta),
    error ? el("p", {class: "error", dataTestid: "config-key-error"}, error) : null);
}

export class SettingsPage {
  constructor(root) { this.root = root; this.view = null; this.message = null; this.errors = {}; }

  async load() {
    const response = await api("/v1/config");
    if (!response.ok) { this.message = {error: (await errorOf(response)).message}; this.view = null; }
    else this.view = await response.json();
    this.render();
  }

  changes() {
    const values = {};
    for (const section of this.view.sections) for (const key of section.keys) {
      const node = this.root.querySelector(`[data-testid=config-input][data-key="${key.key}"]`);
      if (!node) continue;
      const value = readInput(node, key);
      if (key.secret ? value !== null : JSON.stringify(value) !== JSON.stringify(key.value)) values[key.key] = value;
    }
    return values;
  }

  async submit(save) {
    let values;
    try { values = this.changes(); } catch (error) { this.fail(error); return; }
    if (!Object.keys(values).length) { this.message = {info: "nothing changed"}; this.renderMessage(); return; }
    const response = await api("/v1/config", {method: "PATCH", body: JSON.stringify({values, save})});
    if (!response.ok) { this.fail(await errorOf(response)); return; }
    this.view = await response.json();
    this.errors = {};
    this.message = {info: save ? `saved to ${this.view.path}; new runs use it` : "applied: new runs use it (runs in flight keep theirs)"};
    this.render();
  }

  fail(error) {
    // keep what the user typed: only the messages change
    this.errors = error.param ? {[error.param]: error.message} : {};
    this.message = {error: error.message};
    for (const row of this.root.querySelectorAll("[data-testid=config-key]")) {
      const text = this.errors[row.dataset.key];
      row.classList.toggle("invalid", Boolean(text));
      row.querySelector("[data-testid=config-key-error]")?.remove();
      if (text) row.append(el("p", {class: "error", dataTestid: "config-key-error"}, text));
    }
    this.renderMessage();
  }

  renderMessage() {
    const box = this.root.querySelector("#config-message");
    if (!box) return;
    const {error, info} = this.message || {};
    box.replaceChildren(error ? el("p", {class: "error", dataTestid: "config-error"}, error)
      : info ? el("p", {class: "ok", dataTestid: "config-info"}, info) : "");
  }

  render() {
    const view = this.view;
    if (!view) { this.root.replaceChildren(el("div", {id: "config-message"})); this.renderMessage(); return; }
    const actions = el("div", {class: "actions"},
      el("button", {type: "button", id: "config-apply", dataTestid: "config-apply", onclick: () => this.submit(false)}, "Apply to new runs"),
      el("button", {type: "button", id: "config-save", dataTestid: "config-save", disabled: view.path === null,
                    title: view.path === null ? "started without --config" : null, onclick: () => this.submit(true)},
        view.path === null ? "Save (no --config file)" : "Apply and save to the file"));
    this.root.replaceChildren(
      el("h2", {}, "Settings"),
      el("p", {class: "muted"}, "Changes apply to new runs only; a run in flight keeps its configuration. ",
        view.path ? ["File: ", el("code", {dataTestid: "config-path"}, view.path)] : "No --config file: changes last until the server stops."),
      el("div", {id: "config-message"}), actions,
      ...view.sections.map(section => el("section", {class: "panel config-section", dataSection: section.name, dataTestid: "config-section"},
        el("h3", {}, `[${section.name}]`),
        section.keys.map(key => keyRow(key, this.errors[key.key])))));
    this.renderMessage();
  }
}
