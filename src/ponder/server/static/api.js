// The server's token and requests. The token travels only in the Authorization header:
// never in a URL (query strings end up in access logs), never in a cookie (no ambient
// credential, so no cross-site request can use it). It is kept in sessionStorage (this
// tab only); an address fragment "#token=…" is read once and then removed from the address.
"use strict";

const KEY = "ponder-token";

export function takeTokenFromAddress() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (!params.has("token")) return;
  if (params.get("token")) sessionStorage.setItem(KEY, params.get("token"));
  params.delete("token");
  const rest = params.toString();
  history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
}

export function token() { return sessionStorage.getItem(KEY); }
export function setToken(value) { value ? sessionStorage.setItem(KEY, value) : sessionStorage.removeItem(KEY); }

function headers(extra = {}) {
  const all = Object.assign({"content-type": "application/json"}, extra);
  const current = token();
  if (current) all.authorization = "Bearer " + current;
  return all;
}

export function api(path, options = {}) {
  return fetch(path, Object.assign({}, options, {headers: headers(options.headers)}));
}

export async function errorOf(response) {
  const body = await response.json().catch(() => ({}));
  return body.error ? body.error : {message: `HTTP ${response.status}`, param: null};
}

// Server-sent events over fetch (EventSource cannot send headers). Resumes after a drop
// with Last-Event-ID; stops for good once `isDone()` says the run has ended.
export class EventStream {
  constructor(path, {onEvent, onState, isDone}) {
    Object.assign(this, {path, onEvent, onState, isDone, lastId: null, closed: false});
    this.controller = null;
    this.connect();
  }

  close() { this.closed = true; if (this.controller) this.controller.abort(); }

  async connect() {
    while (!this.closed) {
      this.controller = new AbortController();
      const extra = this.lastId ? {"last-event-id": this.lastId} : {};
      try {
        this.onState("connecting");
        const response = await fetch(this.path, {headers: headers(extra), signal: this.controller.signal});
        if (!response.ok) { this.onState(response.status === 401 ? "token needed" : "error"); return; }
        this.onState("live");
        await this.read(response.body.getReader());
      } catch (error) {
        if (this.closed) return;
      }
      if (await this.isDone()) { this.onState("ended"); return; }
      this.onState("reconnecting");
      await new Promise(resolve => setTimeout(resolve, 1500));
    }
  }

  async read(reader) {
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, {stream: true}).replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        this.dispatch(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
      }
    }
  }

  dispatch(block) {
    const fields = {data: []};
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const at = line.indexOf(":");
      const name = at < 0 ? line : line.slice(0, at);
      const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
      if (name === "data") fields.data.push(value); else fields[name] = value;
    }
    if (fields.id) this.lastId = fields.id;
    if (fields.data.length) this.onEvent(JSON.parse(fields.data.join("\n")));
  }
}
