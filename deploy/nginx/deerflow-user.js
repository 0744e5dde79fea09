// njs for deerflow-punctual.conf: answers the auth_request subrequest. 200 with the DeerFlow user id in
// X-DeerFlow-User when DeerFlow's gateway knows the session cookie (its GET /api/v1/auth/me answers
// {"id": ...}); 401 when it does not; 403 when a state-changing request fails DeerFlow's CSRF
// double-submit check (the csrf_token cookie echoed in X-CSRF-Token).
const SAFE = ["GET", "HEAD", "OPTIONS"];

async function user(r) {
  // The subrequest is a GET: the client's method is the main request's.
  if (!SAFE.includes(r.variables.request_method)) {
    const cookie = r.variables.cookie_csrf_token || "";
    if (cookie === "" || cookie !== (r.headersIn["X-CSRF-Token"] || "")) return r.return(403);
  }
  const me = await r.subrequest("/_deerflow_me");
  if (me.status !== 200) return r.return(401);
  let id;
  try {
    id = JSON.parse(me.responseText).id;
  } catch (error) {
    // njs 0.7 has no optional catch binding: the error is logged.
    r.error(`unreadable answer from /api/v1/auth/me: ${error}`);
    return r.return(401);
  }
  if (typeof id !== "string" || id === "") return r.return(401);
  r.headersOut["X-DeerFlow-User"] = id;
  r.return(200);
}

export default { user };
