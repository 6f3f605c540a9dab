// A tiny element builder: text is always text (no innerHTML anywhere in the viewer).
"use strict";

export function el(tag, attrs = {}, ...children) {
  const svg = ["svg", "g", "rect", "text", "path", "title", "line"].includes(tag);
  const node = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.setAttribute("class", value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key.startsWith("data")) node.setAttribute(key.replace(/[A-Z]/g, c => "-" + c.toLowerCase()), String(value));
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function json(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined) return "";
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(2)} s`;
}

export function age(created, now = Date.now() / 1000) {
  const seconds = Math.max(0, now - created);
  if (seconds < 60) return `${Math.floor(seconds)} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

// ``code`` in the docstrings becomes <code>.
export function richText(text) {
  return String(text).split(/``(.+?)``/).map((part, i) => i % 2 ? el("code", {}, part) : part);
}
