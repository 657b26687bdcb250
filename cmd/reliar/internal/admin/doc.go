// Package admin serves reliar serve's admin page: the outbox table's gauges,
// a chart of the last hour sampled by the server, and the dead letters, which
// an operator can filter, inspect, retry and purge.
//
// Pages are rendered on the server with html/template; the stylesheet and a
// little vanilla JavaScript are embedded, so there is no build step. JSON
// lives under /api/. Every request but the login form and the static files
// needs the access token: as "Authorization: Bearer <token>" (API clients) or
// through the session cookie the login form sets (browsers). After ten
// failed logins or bearer tokens within a minute from one address (an IPv6
// /64 counts as one), the address is answered 429 with Retry-After until the
// oldest failure is a minute old, even with the right token, and the burst is
// logged once; the table of addresses is bounded. The login form shows
// nothing about the installation, and /static/ serves files, never a
// directory listing. Every
// state-changing request is checked against cross-site forgery: its Origin
// (else Referer) must name this server, and a cookie session must also send
// its per-session token. Retry and purge go through the same bounded batch
// loops as the dead command, and each action writes one audit record at
// info level, which never holds a payload.
package admin
