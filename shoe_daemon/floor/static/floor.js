/* The floor's pages: fetch JSON from the floor service and draw it. No framework, no MQTT.
 *
 * Languages as on the display (shoe_daemon/web/static/common.js, the same catalogues
 * i18n/<lang>.json, served by the floor): ?lang=en|ru|bg|fi, else the floor's [http] lang
 * (/config.json), else English. The language stays on the page's links. Card codes, numbers,
 * table ids and the tables' own alert messages are the same in every language.
 */
"use strict";

const C = window.shoeCommon;
const t = C.t;

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

// A catalogue's word for a value (an alert kind, a state), or the value itself when it has none.
function word(prefix, value) {
  if (value === null || value === undefined || value === "") return "";
  const key = prefix + value;
  const text = t(key);
  return text === key ? String(value) : text;
}

// The page's ?lang= carried over to the floor's own links.
function href(path) {
  const lang = new URLSearchParams(location.search).get("lang");
  if (!lang) return path;
  return path + (path.includes("?") ? "&" : "?") + "lang=" + encodeURIComponent(lang);
}

function cardEl(code) {
  const red = /[HD]$/.test(code);
  return el("span", { class: "card" + (red ? " red" : ""), "data-code": code, text: code.replace(/^T/, "10") });
}

function when(ts) {
  if (ts === null || ts === undefined) return "";
  return new Date(ts * 1000).toISOString().replace("T", " ").slice(0, 19);
}

function winnerEl(w) {
  return el("span", { class: "w-" + w, text: word("common.", w) });
}

// A void coup: by whom and why when the table said so (a void after settlement keeps its cards).
function voidEl(c) {
  const text = c.voided_by ? t("floor.void_by", { by: c.voided_by, reason: c.void_reason || "" })
    : (c.void_reason ? t("floor.void_why", { reason: c.void_reason }) : t("floor.void"));
  return el("span", { class: "void", "data-by": c.voided_by || "", title: when(c.voided_at), text: text });
}

async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store" });
  if (!r.ok) throw new Error(url + ": " + r.status);
  return r.json();
}

function tileEl(tb) {
  const classes = ["tile"];
  if (tb.held) classes.push("held");
  else if (tb.alerts.length || tb.gaps.length) classes.push("alerting");
  if (tb.status !== "online") classes.push("offline");
  const head = el("div", { class: "tile-head" }, [
    el("span", { class: "light " + tb.status, title: word("floor.state.", tb.status) }),
    el("a", { class: "id", href: href("/table/" + encodeURIComponent(tb.table_id)), text: tb.name || tb.table_id }),
    el("span", { class: "where", text: tb.shoe ? t("floor.where", { shoe: tb.shoe, coup: tb.coup || "-" }) : t("floor.no_shoe") }),
    tb.held ? el("span", { class: "badge held", text: t("floor.held") })
      : (tb.alerts.length ? el("span", { class: "badge alert", text: t("floor.alerts_n", { n: tb.alerts.length }) }) : null),
  ]);
  const hand = (side) => el("div", { class: "hand " + side, "data-side": side },
    [...(tb[side] || []).map(cardEl), el("span", { class: "total", text: (tb[side] || []).length ? String(tb[side + "_total"]) : "" })]);
  const road = el("div", { class: "road", "data-results": String(tb.road.length) },
    tb.road.map((r) => el("span", { class: "bead " + r.winner, "data-coup": String(r.coup),
      title: t("floor.bead", { coup: r.coup, winner: word("common.", r.winner) }) })));
  // The worst first; a tile shows three, the drill-down has them all.
  const rank = { critical: 0, error: 1, warning: 2 };
  const shown = [...tb.alerts].sort((a, b) => (rank[a.severity] ?? 3) - (rank[b.severity] ?? 3)).slice(0, 3);
  const alerts = el("div", { class: "alerts", "data-alerts": String(tb.alerts.length) }, [
    ...shown.map((a) => el("div", { class: "alert " + a.severity, "data-kind": a.kind, title: a.message },
      [el("b", { text: word("alert.", a.kind) }), document.createTextNode(" " + (a.message || ""))])),
    tb.alerts.length > 3 ? el("div", { class: "alert more", text: t("floor.more", { n: tb.alerts.length - 3 }) }) : null,
    ...tb.gaps.map((g) => el("div", { class: "alert warning", "data-kind": "gap",
      text: t("floor.gap", { from: g.from_seq, to: g.to_seq, state: word("floor.gap.", g.state) }) })),
  ]);
  return el("article", { class: classes.join(" "), "data-table": tb.table_id, "data-status": tb.status,
    "data-held": tb.held ? "1" : "0", "data-shoe": String(tb.shoe || ""), "data-coup": String(tb.coup || "") },
    [head, el("div", { class: "hands" }, [hand("punto"), hand("banco")]), road, alerts]);
}

async function drawFloor() {
  const data = await getJSON("/api/floor");
  const c = data.counts;
  document.getElementById("counts").replaceChildren(
    ...[["tables", c.tables], ["online", c.online], ["held", c.held], ["alerts", c.alerts], ["coups", c.coups]]
      .map(([k, v]) => el("span", { "data-count": k }, [document.createTextNode(t("floor.count." + k)), el("b", { text: String(v) })])));
  document.getElementById("floor-alerts").replaceChildren(...data.floor_alerts.map((a) =>
    el("div", { class: "floor-alert", "data-kind": a.kind, "data-table": a.table_id,
      text: t("floor.missing", { table: a.table_id, from: a.from_seq, to: a.to_seq,
        state: word("floor.gap.", a.state) + (a.error ? ": " + a.error : "") }) })));
  document.getElementById("grid").replaceChildren(...data.tables.map(tileEl));
  document.body.dataset.updated = String(data.generated_at);
}

function coupRows(coups, withTable) {
  return coups.map((c) => el("tr", { "data-coup-id": c.coup_id, "data-table": c.table_id, "data-voided": c.voided ? "1" : "0" }, [
    withTable ? el("td", {}, [el("a", { href: href("/table/" + encodeURIComponent(c.table_id)), text: c.table_id })]) : null,
    el("td", { text: `${c.shoe}-${c.coup}` + (c.revision ? ` r${c.revision}` : "") }),
    el("td", { text: when(c.t) }),
    el("td", {}, [c.voided ? voidEl(c) : winnerEl(c.winner)]),
    el("td", {}, (c.punto || []).map(cardEl)), el("td", { text: String(c.punto_total ?? "") }),
    el("td", {}, (c.banco || []).map(cardEl)), el("td", { text: String(c.banco_total ?? "") }),
    el("td", { text: c.settlement ? (c.settlement.totals ? t("floor.net", { net: c.settlement.totals.net })
      : word("outcome.", c.settlement.status)) : "" }),
  ]));
}

function coupTable(coups, withTable) {
  const head = [withTable ? "table" : null, "coup", "time", "winner", "punto", "", "banco", "", "settlement"];
  return el("table", { class: "list" }, [
    el("thead", {}, [el("tr", {}, head.filter((h) => h !== null).map((h) => el("th", { text: h ? t("floor.col." + h) : "" })))]),
    el("tbody", {}, coupRows(coups, withTable)),
  ]);
}

// cols: [field, column key, the catalogue prefix of its values (or null)]
function listTable(rows, cols) {
  const cell = (r, k, prefix) => (k === "t" || k === "at") ? when(r[k]) : (prefix ? word(prefix, r[k]) : String(r[k] ?? ""));
  return el("table", { class: "list" }, [
    el("thead", {}, [el("tr", {}, cols.map(([, label]) => el("th", { text: t("floor.col." + label) })))]),
    el("tbody", {}, rows.map((r) => el("tr", {}, cols.map(([k, , prefix]) => el("td", { text: cell(r, k, prefix) }))))),
  ]);
}

async function drawTable() {
  const id = decodeURIComponent(location.pathname.split("/").pop());
  const d = await getJSON("/api/tables/" + encodeURIComponent(id));
  document.getElementById("title").textContent = t("floor.table_title", { table: d.table.name || d.table.table_id });
  document.getElementById("tile").replaceChildren(tileEl(d.table));
  document.getElementById("coups").replaceChildren(coupTable(d.coups, false));
  document.getElementById("alerts").replaceChildren(listTable(d.alert_events,
    [["t", "time"], ["alert_id", "alert"], ["kind", "kind", "alert."], ["severity", "severity", "floor.severity."],
      ["action", "action", "floor.action."], ["by_user", "by"], ["reason", "reason"]]));
  document.getElementById("actions").replaceChildren(listTable(d.actions,
    [["t", "time"], ["kind", "kind", "alert."], ["action", "action", "floor.action."], ["by_user", "by"], ["reason", "reason"]]));
  document.getElementById("status").replaceChildren(listTable(d.status_changes,
    [["at", "time"], ["state", "state", "floor.state."], ["version", "version"]]));
  document.getElementById("gaps").replaceChildren(listTable(d.gaps,
    [["from_seq", "from"], ["to_seq", "to"], ["state", "state", "floor.gap."], ["coups_recovered", "recalled"], ["error", "error"]]));
  document.body.dataset.updated = String(Date.now());
}

async function drawRecall(ev) {
  if (ev) ev.preventDefault();
  const form = document.getElementById("query");
  const params = new URLSearchParams();
  for (const [k, v] of new FormData(form)) if (v) params.set(k, v);
  const lang = new URLSearchParams(location.search).get("lang");
  history.replaceState(null, "", "?" + params + (lang ? (params.toString() ? "&" : "") + "lang=" + encodeURIComponent(lang) : ""));
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

// The page's language and fonts first, then its drawing (the fonts' mark is what tests wait for).
function start(fn) {
  const begin = getJSON("/config.json").catch(() => ({}))
    .then((cfg) => C.loadLang(C.chooseLang(cfg.lang)))
    .then(() => {
      C.translate();
      document.querySelectorAll("a[data-nav]").forEach((a) => { a.href = href(a.getAttribute("data-nav")); });
      document.title = t(document.body.dataset.title || "floor.title");
      return C.fontsReady();
    });
  return begin.then(fn);
}
