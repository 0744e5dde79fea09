/**
 * `/docs`: a small self-contained page that renders the OpenAPI document (no CDN: punctual must work
 * offline). Each operation lists its parameters, request body, responses and their schemas.
 */
export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>punctual API</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 980px; padding: 1rem 2rem; color: #1d2430; }
  h1 { margin-bottom: 0; } code, pre { font: 13px ui-monospace, monospace; }
  pre { background: #f4f6f8; padding: .75rem; overflow: auto; border-radius: 6px; }
  details.op { border: 1px solid #d6dbe1; border-radius: 6px; margin: .5rem 0; }
  details.op > summary { cursor: pointer; padding: .5rem .75rem; list-style: none; }
  details.op[open] > summary { border-bottom: 1px solid #d6dbe1; }
  .body { padding: .5rem .75rem; }
  .m { display: inline-block; min-width: 4.5rem; font-weight: 600; font-family: ui-monospace, monospace; }
  .GET { color: #1565c0; } .POST { color: #2e7d32; } .PATCH { color: #ef6c00; } .DELETE { color: #c62828; }
  table { border-collapse: collapse; } td, th { text-align: left; padding: .2rem .6rem; border-bottom: 1px solid #eee; vertical-align: top; }
  .muted { color: #5b6573; }
  td code { overflow-wrap: anywhere; } .body { overflow-x: auto; }
  @media (max-width: 640px) { body { padding: .5rem .75rem; } }
</style>
</head>
<body>
<h1>punctual API</h1>
<p class="muted">Generated from <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).
Send <code>Authorization: Bearer &lt;token&gt;</code> on every <code>/v1</code> call.</p>
<p id="description"></p>
<div id="ops">Loading…</div>
<h2>Schemas</h2>
<div id="schemas"></div>
<script>
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
// The document's prose is Markdown: code spans, bold and links are rendered (after escaping, so no
// markup from the document is ever parsed as HTML); a link goes only to http(s), a path or an anchor.
const md = (s) => esc(s || "")
  .replace(/\`([^\`]+)\`/g, "<code>$1</code>")
  .replace(/\\*\\*([^*]+)\\*\\*/g, "<b>$1</b>")
  .replace(/\\[([^\\]]+)\\]\\(((?:https?:\\/\\/|\\/|#)[^)\\s]*)\\)/g, '<a href="$2">$1</a>');
const pretty = (v) => "<pre>" + esc(JSON.stringify(v, null, 2)) + "</pre>";
fetch("/openapi.json").then((r) => r.json()).then((doc) => {
  document.getElementById("description").innerHTML = md(doc.info.description);
  const ops = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const m = method.toUpperCase();
      let html = '<details class="op"><summary><span class="m ' + m + '">' + m + "</span> <code>" + esc(path) +
        "</code> — " + md(op.summary) + (op.security && op.security.length === 0 ? ' <span class="muted">(no token)</span>' : "") +
        '</summary><div class="body">';
      if (op.parameters && op.parameters.length) {
        html += "<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>schema</th><th></th></tr>";
        for (const p of op.parameters) {
          html += "<tr><td><code>" + esc(p.name) + "</code></td><td>" + esc(p.in) + "</td><td>" + (p.required ? "yes" : "") +
            "</td><td><code>" + esc(JSON.stringify(p.schema)) + "</code></td><td>" + md(p.description) + "</td></tr>";
        }
        html += "</table>";
      }
      if (op.requestBody) {
        for (const [type, c] of Object.entries(op.requestBody.content)) html += "<h4>Body (" + esc(type) + ")</h4>" + pretty(c.schema);
      }
      html += "<h4>Responses</h4><table>";
      for (const [status, r] of Object.entries(op.responses)) {
        const content = r.content ? Object.entries(r.content).map(([t, c]) => esc(t) + " " + esc(JSON.stringify(c.schema))).join("<br>") : "";
        html += "<tr><td><b>" + esc(status) + "</b></td><td>" + md(r.description) + '</td><td><code class="muted">' + content + "</code></td></tr>";
      }
      ops.push(html + "</table></div></details>");
    }
  }
  document.getElementById("ops").innerHTML = ops.join("");
  document.getElementById("schemas").innerHTML = Object.entries(doc.components.schemas)
    .map(([name, s]) => '<details class="op" id="' + esc(name) + '"><summary><code>' + esc(name) + "</code></summary><div class=\\"body\\">" + pretty(s) + "</div></details>")
    .join("");
}).catch((e) => { document.getElementById("ops").textContent = "Could not load /openapi.json: " + e; });
</script>
</body>
</html>
`;
