// ponder viewer: which texts may become links. Only an absolute http(s) URL does; any other
// (a server's "javascript:" or "data:" URL, a relative path) is shown as text, never clicked.
// A classic script: it sets window.ponderLinks before elicitation.js runs.
"use strict";

window.ponderLinks = Object.freeze({
  // The URL to put in an href, or null when ``text`` must stay text.
  httpUrl(text) {
    let url;
    try {
      url = new URL(String(text));
    } catch {
      return null;
    }
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  },
});
