// Runs the viewer's links.js and elicitation.js (as served, read from stdin as JSON
// {links, elicitation}) on a minimal stand-in for the DOM, shows a URL-mode question for
// each URL in argv[2] (JSON list) and prints, per URL, the hrefs of the links it made.
"use strict";
const vm = require("vm");

const created = [];
function element(tag) {
  const made = {
    tag, attrs: {}, children: [], dataset: {}, hidden: false, textContent: "",
    setAttribute(key, value) { this.attrs[key] = value; },
    append(...children) { this.children.push(...children); },
    replaceChildren(...children) { this.children = children; },
    after() {}, remove() {}, addEventListener() {},
    querySelector() { return element("any"); },
    querySelectorAll() { return []; },
  };
  created.push(made);
  return made;
}

function links(node) {
  const found = node.tag === "a" ? [node.attrs.href] : [];
  return found.concat(...(node.children || []).map(links));
}

async function main() {
  const sources = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const urls = JSON.parse(process.argv[2]);
  const listeners = {};
  let questions = [];
  const window = {addEventListener: (name, listener) => { listeners[name] = listener; }};
  const context = {
    window, URL, console, Promise,
    document: {createElement: element, querySelector: () => element("header"), body: {firstChild: element("div")}},
    sessionStorage: {getItem: () => null},
    fetch: async () => ({ok: true, json: async () => ({data: questions})}),
    setInterval: () => 0, setTimeout: () => 0,
  };
  vm.createContext(context);
  vm.runInContext(sources.links, context);
  vm.runInContext(sources.elicitation, context);
  const box = created.find(made => made.tag === "section");  // the questions panel
  const result = [];
  for (const [i, url] of urls.entries()) {
    questions = [{id: "q" + i, mode: "url", url, message: "Open this"}];
    listeners["ponder:run"]({detail: {id: "run" + i, status: "suspended", reason: "elicitation"}});
    await new Promise(resolve => setTimeout(resolve, 20));  // the page fetches, then draws
    result.push(links(box));
  }
  console.log(JSON.stringify(result));
}

main().catch(error => { console.error(error); process.exit(1); });
