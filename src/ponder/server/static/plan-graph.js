// step-react's plan as a DAG: one row per dependency depth, an edge per depends_on.
"use strict";

import {el} from "./dom.js";

const FINISHED = ["done", "stopped", "skipped"];  // a step that ended and let its dependants start
const W = 150, H = 40, GAP_X = 16, GAP_Y = 34, PAD = 6;

function depths(steps) {
  const byId = new Map(steps.map(s => [s.id, s]));
  const memo = new Map();
  const depth = (id, seen = new Set()) => {
    if (memo.has(id)) return memo.get(id);
    if (seen.has(id)) return 0;  // a cycle: the planner refuses them, stay safe anyway
    seen.add(id);
    const deps = (byId.get(id)?.dependsOn || []).filter(d => byId.has(d));
    const value = deps.length ? 1 + Math.max(...deps.map(d => depth(d, seen))) : 0;
    memo.set(id, value);
    return value;
  };
  for (const s of steps) depth(s.id);
  return memo;
}

function clip(text, chars) {
  return text.length > chars ? text.slice(0, chars - 1) + "…" : text;
}

export function planGraph(steps) {
  if (!steps || !steps.length) return null;
  const level = depths(steps);
  const rows = [];
  for (const s of steps) (rows[level.get(s.id)] ||= []).push(s);
  const widest = Math.max(...rows.map(r => r.length));
  const width = PAD * 2 + widest * W + (widest - 1) * GAP_X;
  const height = PAD * 2 + rows.length * H + (rows.length - 1) * GAP_Y;
  const at = new Map();
  rows.forEach((row, y) => {
    const offset = (width - (row.length * W + (row.length - 1) * GAP_X)) / 2;
    row.forEach((s, x) => at.set(s.id, {x: offset + x * (W + GAP_X), y: PAD + y * (H + GAP_Y)}));
  });
  const edges = steps.flatMap(s => s.dependsOn.filter(d => at.has(d)).map(d => {
    const from = at.get(d), to = at.get(s.id);
    const x1 = from.x + W / 2, y1 = from.y + H, x2 = to.x + W / 2, y2 = to.y;
    const mid = (y1 + y2) / 2;
    return el("path", {class: "edge", dataFrom: d, dataTo: s.id, dataTestid: "plan-edge",
                       d: `M${x1},${y1} C${x1},${mid} ${x2},${mid} ${x2},${y2 - 4}`, "marker-end": "url(#arrow)"});
  }));
  const nodes = steps.map(s => {
    const {x, y} = at.get(s.id);
    return el("g", {class: "node " + s.status, dataStepId: s.id, dataStatus: s.status, dataTestid: "plan-node",
                    transform: `translate(${x},${y})`},
      el("title", {}, `${s.id} (${s.status}): ${s.description}`),
      el("rect", {width: W, height: H, rx: 6}),
      el("text", {x: 8, y: 16, class: "id"}, clip(`${s.id} · ${s.status}`, 24)),
      el("text", {x: 8, y: 32}, clip(s.description, 24)));
  });
  const defs = document.createElementNS("http://www.w3.org/2000/svg", "defs");
  const arrow = document.createElementNS("http://www.w3.org/2000/svg", "marker");
  for (const [k, v] of Object.entries({id: "arrow", viewBox: "0 0 8 8", refX: "4", refY: "4", markerWidth: "6", markerHeight: "6", orient: "auto"})) arrow.setAttribute(k, v);
  arrow.append(el("path", {d: "M0,0 L8,4 L0,8 z", class: "arrow"}));
  defs.append(arrow);
  return el("section", {class: "panel graph", dataTestid: "plan-graph"},
    el("h3", {}, `Plan · ${steps.filter(s => FINISHED.includes(s.status)).length}/${steps.length} done`),
    el("svg", {viewBox: `0 0 ${width} ${height}`, width: "100%", style: `max-width:${width}px`, role: "img",
               "aria-label": "the plan's steps and their dependencies"}, defs, edges, nodes));
}
