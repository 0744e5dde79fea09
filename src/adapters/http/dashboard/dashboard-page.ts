/**
 * The dashboard's HTML shell (docs/dashboard.md): a token prompt, a notice area and the view the script fills.
 * It holds no data; its entry module (browser/app.js) renders every server value through DOM text nodes.
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>punctual</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard.css">
<script type="module" src="/dashboard/app.js"></script>
</head>
<body>
<header>
  <a class="brand" href="#/">punctual</a>
  <nav>
    <a href="#/">Tasks</a>
    <a href="#/new">New task</a>
    <a href="#/overview">Overview</a>
    <a href="#/runs">Runs</a>
    <a href="#/calendars">Calendars</a>
    <a href="/docs">API</a>
    <button id="forget" type="button" class="link">Forget token</button>
  </nav>
</header>
<div id="notice" role="status" hidden></div>
<form id="login" hidden>
  <h2>API token</h2>
  <p id="login-message"></p>
  <label>Bearer token <input id="token" type="password" autocomplete="off" required></label>
  <button type="submit">Use this token</button>
  <p class="muted">The token stays in this tab's sessionStorage and is sent only to this server.
  <code>npm start</code> prints an admin token on its first run; <code>punctual token create</code> makes others.</p>
</form>
<main id="view"></main>
</body>
</html>
`;
