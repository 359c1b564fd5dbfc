/* The floor's pages: fetch JSON from the floor service and draw it. No framework, no MQTT. */
"use strict";

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k.startsWith("data-")) node.setAttribute(k, v);
    else if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children || []) if (c) node.appendChild(c);
  return node;
}

function cardEl(code) {
  const red = /[HD]$/.test(code);
  return el("span", { class: "card" + (red ? " red" : ""), "data-code": code, text: code.replace(/^T/, "10") });
}

function when(t) {
  if (t === null || t === undefined) return "";
  return new Date(t * 1000).toISOString().replace("T", " ").slice(0, 19);
}

function winnerEl(w) {
  return el("span", { class: "w-" + (w || "none"), text: w ? w[0].toUpperCase() + w.slice(1) : "void" });
}

async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store" });
  if (!r.ok) throw new Error(url + ": " + r.status);
  return r.json();
}

function tileEl(t) {
  const classes = ["tile"];
  if (t.held) classes.push("held");
  else if (t.alerts.length || t.gaps.length) classes.push("alerting");
  if (t.status !== "online") classes.push("offline");
  const head = el("div", { class: "tile-head" }, [
    el("span", { class: "light " + t.status, title: t.status }),
    el("a", { class: "id", href: "/table/" + encodeURIComponent(t.table_id), text: t.name || t.table_id }),
    el("span", { class: "where", text: t.shoe ? `shoe ${t.shoe} · coup ${t.coup || "-"}` : "no shoe yet" }),
    t.held ? el("span", { class: "badge held", text: "HELD" })
      : (t.alerts.length ? el("span", { class: "badge alert", text: t.alerts.length + " ALERT" + (t.alerts.length > 1 ? "S" : "") }) : null),
  ]);
  const hand = (side) => el("div", { class: "hand " + side, "data-side": side },
    [...(t[side] || []).map(cardEl), el("span", { class: "total", text: (t[side] || []).length ? String(t[side + "_total"]) : "" })]);
  const road = el("div", { class: "road", "data-results": String(t.road.length) },
    t.road.map((r) => el("span", { class: "bead " + r.winner, "data-coup": String(r.coup), title: `coup ${r.coup}: ${r.winner}` })));
  // The worst first; a tile shows three, the drill-down has them all.
  const rank = { critical: 0, error: 1, warning: 2 };
  const shown = [...t.alerts].sort((a, b) => (rank[a.severity] ?? 3) - (rank[b.severity] ?? 3)).slice(0, 3);
  const alerts = el("div", { class: "alerts", "data-alerts": String(t.alerts.length) }, [
    ...shown.map((a) => el("div", { class: "alert " + a.severity, "data-kind": a.kind, title: a.message, text: `${a.kind}: ${a.message}` })),
    t.alerts.length > 3 ? el("div", { class: "alert more", text: `+${t.alerts.length - 3} more` }) : null,
    ...t.gaps.map((g) => el("div", { class: "alert warning", "data-kind": "gap", text: `gap: messages ${g.from_seq}-${g.to_seq} ${g.state}` })),
  ]);
  return el("article", { class: classes.join(" "), "data-table": t.table_id, "data-status": t.status,
    "data-held": t.held ? "1" : "0", "data-shoe": String(t.shoe || ""), "data-coup": String(t.coup || "") },
    [head, el("div", { class: "hands" }, [hand("punto"), hand("banco")]), road, alerts]);
}

async function drawFloor() {
  const data = await getJSON("/api/floor");
  const c = data.counts;
  document.getElementById("counts").replaceChildren(
    ...[["tables", c.tables], ["online", c.online], ["held", c.held], ["alerts", c.alerts], ["coups", c.coups]]
      .map(([k, v]) => el("span", { "data-count": k }, [document.createTextNode(k), el("b", { text: String(v) })])));
  document.getElementById("floor-alerts").replaceChildren(...data.floor_alerts.map((a) =>
    el("div", { class: "floor-alert", "data-kind": a.kind, "data-table": a.table_id,
      text: `table ${a.table_id}: messages ${a.from_seq}-${a.to_seq} missing (${a.state}${a.error ? ": " + a.error : ""})` })));
  document.getElementById("grid").replaceChildren(...data.tables.map(tileEl));
  document.body.dataset.updated = String(data.generated_at);
}

function coupRows(coups, withTable) {
  return coups.map((c) => el("tr", { "data-coup-id": c.coup_id, "data-table": c.table_id }, [
    withTable ? el("td", {}, [el("a", { href: "/table/" + c.table_id, text: c.table_id })]) : null,
    el("td", { text: `${c.shoe}-${c.coup}` + (c.revision ? ` r${c.revision}` : "") }),
    el("td", { text: when(c.t) }),
    el("td", {}, [c.voided ? el("span", { text: "void" }) : winnerEl(c.winner)]),
    el("td", {}, (c.punto || []).map(cardEl)), el("td", { text: String(c.punto_total ?? "") }),
    el("td", {}, (c.banco || []).map(cardEl)), el("td", { text: String(c.banco_total ?? "") }),
    el("td", { text: c.settlement ? (c.settlement.totals ? "net " + c.settlement.totals.net : c.settlement.status) : "" }),
  ]));
}

function coupTable(coups, withTable) {
  const head = [withTable ? "table" : null, "coup", "time (UTC)", "winner", "punto", "", "banco", "", "settlement"];
  return el("table", { class: "list" }, [
    el("thead", {}, [el("tr", {}, head.filter((h) => h !== null).map((h) => el("th", { text: h })))]),
    el("tbody", {}, coupRows(coups, withTable)),
  ]);
}

function listTable(rows, cols) {
  return el("table", { class: "list" }, [
    el("thead", {}, [el("tr", {}, cols.map(([, label]) => el("th", { text: label })))]),
    el("tbody", {}, rows.map((r) => el("tr", {}, cols.map(([k]) => el("td", { text: k === "t" || k === "at" ? when(r[k]) : String(r[k] ?? "") }))))),
  ]);
}

async function drawTable() {
  const id = decodeURIComponent(location.pathname.split("/").pop());
  const d = await getJSON("/api/tables/" + encodeURIComponent(id));
  document.getElementById("title").textContent = "TABLE " + (d.table.name || d.table.table_id);
  document.getElementById("tile").replaceChildren(tileEl(d.table));
  document.getElementById("coups").replaceChildren(coupTable(d.coups, false));
  document.getElementById("alerts").replaceChildren(listTable(d.alert_events,
    [["t", "time (UTC)"], ["alert_id", "alert"], ["kind", "kind"], ["severity", "severity"], ["action", "action"], ["by_user", "by"], ["reason", "reason"]]));
  document.getElementById("actions").replaceChildren(listTable(d.actions,
    [["t", "time (UTC)"], ["kind", "kind"], ["action", "action"], ["by_user", "by"], ["reason", "reason"]]));
  document.getElementById("status").replaceChildren(listTable(d.status_changes, [["at", "time (UTC)"], ["state", "state"], ["version", "version"]]));
  document.getElementById("gaps").replaceChildren(listTable(d.gaps,
    [["from_seq", "from"], ["to_seq", "to"], ["state", "state"], ["coups_recovered", "coups recalled"], ["error", "error"]]));
  document.body.dataset.updated = String(Date.now());
}

async function drawRecall(ev) {
  if (ev) ev.preventDefault();
  const form = document.getElementById("query");
  const params = new URLSearchParams();
  for (const [k, v] of new FormData(form)) if (v) params.set(k, v);
  history.replaceState(null, "", "?" + params);
  const d = await getJSON("/api/coups?" + params);
  document.getElementById("results").replaceChildren(coupTable(d.coups, true));
  const csv = new URLSearchParams(params); csv.delete("shoe"); csv.delete("coup"); csv.delete("limit");
  document.getElementById("csv").href = "/export/coups.csv?" + csv;
  document.body.dataset.updated = String(Date.now());
  document.body.dataset.results = String(d.coups.length);
}

function every(fn, ms) {
  const run = () => fn().catch((e) => { document.body.dataset.error = String(e); }).finally(() => setTimeout(run, ms));
  run();
}
