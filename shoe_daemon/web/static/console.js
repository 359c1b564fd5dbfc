/* shoe-daemon console: the dealer's screen (800x480, touch) and the supervisor's tablet (1280x800).
 *
 * Sign in with a role token (typed, or in a kiosk URL's fragment: /console/#token=...; the
 * fragment never reaches a server log). The console then follows the table live over the
 * API's WebSocket /stream (the same messages as MQTT, the retained state first) and does
 * everything through the HTTP API of the same server, so every action passes the API's role
 * checks, is journaled, and lands in the audit log. A refusal (wrong role, a coup that moved
 * on, bets out of limits) is shown with the API's own message.
 *
 * The console never guesses a role: it shows every action, and the API says no (403) with
 * the reason, which the console shows. ?lang=en|ru|bg|fi, default [display] lang.
 */
(function () {
  "use strict";

  var C = window.shoeCommon;
  var t = C.t;
  var $ = function (id) { return document.getElementById(id); };

  var RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"];
  var SUITS = ["S", "H", "D", "C"];
  var SUIT_GLYPH = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  var KINDS = ["punto", "banco", "tie"];
  var CHIPS = [5, 10, 25, 100, 500, 1000];
  var RECALL_STEP = 10;
  var MESSAGE_MS = 9000;
  var TOKEN_KEY = "shoe-console-token";

  var state = {
    token: null,
    who: null,
    config: {},
    coup: null,
    betsOpenFor: null,
    shoe: null,
    alerts: [],
    sources: {},
    conn: "connecting",
    tab: "coup",
    pick: { rank: null, suit: null },
    bets: {},          // "seat:kind" -> amount (number)
    betCell: null,     // the selected "seat:kind"
    recallLast: RECALL_STEP,
    lastResult: null,  // the last coup/result payload
    attention: "",     // "held" / "awaiting" while the coup needs a person
    decks: null,
  };
  var ws = null;

  // ------------------------------------------------------------------ helpers

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function button(cls, text, onClick) {
    var b = el("button", "btn " + (cls || ""), text);
    b.type = "button";
    b.addEventListener("click", onClick);
    return b;
  }

  function cardLabel(code) {
    var rank = code.slice(0, -1);
    var suit = code.slice(-1);
    return (rank === "T" ? "10" : rank) + (SUIT_GLYPH[suit] || suit);
  }

  function cardChip(code, source) {
    var suit = code.slice(-1);
    var c = el("span", "card " + (suit === "H" || suit === "D" ? "red" : "black"), cardLabel(code));
    c.dataset.code = code;
    if (source && source !== "shoe") {
      c.classList.add("src-" + (source === "camera" ? "camera" : "manual"));
      c.appendChild(el("i", "src", source === "camera" ? t("console.src.camera") : t("console.src.manual")));
    }
    return c;
  }

  function amount(v) {
    var n = Number(v);
    if (!isFinite(n)) return String(v);
    return n.toLocaleString("en-US", { maximumFractionDigits: 2 }).replace(/,/g, "\u2009");
  }

  function humanKind(kind) {
    var key = "alert." + kind;
    var text = t(key);
    return text === key ? String(kind || "").replace(/_/g, " ").toUpperCase() : text;
  }

  var messageTimer = null;
  function message(text, kind) {
    var m = $("message");
    m.textContent = text;
    m.dataset.kind = kind || "info";
    m.dataset.seq = String((Number(m.dataset.seq) || 0) + 1);   // a new message, even with the same text
    m.hidden = false;
    clearTimeout(messageTimer);
    messageTimer = setTimeout(function () { m.hidden = true; }, MESSAGE_MS);
  }

  // ------------------------------------------------------------------ the API

  function api(method, path, body) {
    var opts = { method: method, headers: { Accept: "application/json" }, cache: "no-store" };
    if (state.token) opts.headers.Authorization = "Bearer " + state.token;
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    return fetch("../" + path.replace(/^\//, ""), opts).then(function (r) {
      return r.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        var error = !r.ok ? ((data && data.error && data.error.message) || (r.status + " " + r.statusText)) : null;
        return { ok: r.ok, status: r.status, data: data, error: error };
      });
    }, function (err) {
      return { ok: false, status: 0, data: null, error: t("console.error.network", { what: String(err && err.message || err) }) };
    });
  }

  // An action's answer: done (say so), or refused (say why, in the API's words).
  function report(res, done) {
    if (res.ok) {
      message(done, "ok");
      return true;
    }
    var why = res.status === 403 ? t("console.error.forbidden", { why: res.error }) :
      res.status === 401 ? t("console.error.unauthorized") : t("console.error.refused", { why: res.error });
    message(why, "error");
    return false;
  }

  // ------------------------------------------------------------------ sign in

  function tokenFromFragment() {
    var m = /(?:^#|&)token=([^&]+)/.exec(window.location.hash || "");
    if (!m) return null;
    history.replaceState(null, "", window.location.pathname + window.location.search);   // out of the URL bar
    return decodeURIComponent(m[1]);
  }

  function signIn(token) {
    state.token = token;
    return api("GET", "auth/whoami").then(function (res) {
      if (!res.ok) {
        state.token = null;
        sessionStorage.removeItem(TOKEN_KEY);
        $("signin-error").textContent = res.status === 401 ? t("console.signin.unknown") : res.error;
        showScreen("signin");
        return;
      }
      state.who = res.data;
      sessionStorage.setItem(TOKEN_KEY, token);
      $("signin-error").textContent = "";
      $("token").value = "";
      $("console").dataset.role = state.who.role;
      $("who").textContent = state.who.user + " \u00b7 " + t("role." + state.who.role);
      showScreen("main");
      connect();
      refreshRecall();
      refreshSettlement();
    });
  }

  function signOut() {
    sessionStorage.removeItem(TOKEN_KEY);
    state.token = null;
    state.who = null;
    if (ws) { ws.onclose = null; ws.close(); ws = null; }
    $("console").dataset.role = "";
    showScreen("signin");
  }

  function showScreen(name) {
    $("console").dataset.screen = name;
  }

  // ------------------------------------------------------------------ the stream

  function connect() {
    var url = new URL("../stream", window.location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    setConn(state.conn === "connected" ? "reconnecting" : state.conn);
    ws = new WebSocket(url.href);
    ws.onopen = function () { setConn("connected"); };
    ws.onmessage = function (ev) {
      var msg;
      try { msg = JSON.parse(ev.data); } catch (e) { return; }
      var h = handlers[msg.topic];
      if (h && msg.payload) {
        try { h(msg.payload, msg); } catch (err) { if (window.console) console.error("console: " + msg.topic, err); }
      }
    };
    ws.onclose = function () {
      setConn("reconnecting");
      ws = null;
      setTimeout(function () { if (state.token && !ws) connect(); }, 1000);
    };
  }

  function setConn(st) {
    state.conn = st;
    $("c-conn").dataset.state = st;
    $("c-conn-text").textContent = t("conn." + st);
  }

  var handlers = {
    "coup/current": function (p) {
      var moved = !state.coup || state.coup.coup_id !== p.coup_id;
      state.coup = p;
      if (moved) { state.pick = { rank: null, suit: null }; }
      renderCoup();
      refreshBetsOpenFor();
    },
    "coup/result": function (p) {
      state.lastResult = p;
      refreshSettlement();
      refreshRecall();
    },
    "shoe": function (p) { state.shoe = p; renderShoe(); renderCoup(); },
    "sources": function (p) { state.sources = p.sources || {}; renderCoup(); },
    "alerts/active": function (p) { state.alerts = p.alerts || []; renderAlerts(); renderCoup(); },
    "alerts/event": function (p) {
      var a = p.alert || {};
      if (p.action === "cleared") state.alerts = state.alerts.filter(function (x) { return x.id !== a.id; });
      else if (a.severity !== "info") {
        var found = false;
        state.alerts = state.alerts.map(function (x) { if (x.id === a.id) { found = true; return a; } return x; });
        if (!found && p.action === "raised") state.alerts = state.alerts.concat([a]);
      }
      renderAlerts();
      renderCoup();
    },
  };

  // ------------------------------------------------------------------ the coup

  function linkDown() {
    var shoe = state.sources && state.sources.shoe;
    return !!(shoe && (shoe.link === "down" || (shoe.shoe && shoe.shoe !== "inserted")));
  }

  function awaitedCard() {
    var c = state.coup;
    if (!c || c.held || c.voided) return false;
    if (c.awaiting && c.awaiting.unreadable > 0) return "unreadable";
    if (linkDown() && !c.complete && !(state.shoe && state.shoe.shoe_over)) return "link_down";
    return false;
  }

  function coupAlerts(c) {
    return state.alerts.filter(function (a) { return a.shoe === c.shoe && a.coup === c.coup; });
  }

  // The evidence an alert carries, as "key value" pairs (scalars and lists of them; at most 8).
  function evidenceFacts(evidence) {
    if (!evidence || typeof evidence !== "object") return "";
    var out = [];
    Object.keys(evidence).forEach(function (k) {
      var v = evidence[k];
      if (Array.isArray(v) && v.every(function (x) { return x === null || typeof x !== "object"; })) v = v.join(" ");
      if (v === null || v === undefined || typeof v === "object" || out.length >= 8) return;
      out.push(k.replace(/_/g, " ") + " " + v);
    });
    return out.join(" \u00b7 ");
  }

  function dealingOrder(c) {
    var p = c.punto || [], b = c.banco || [], out = [];
    for (var i = 0; i < 2; i++) {
      if (p[i]) out.push({ side: "punto", pos: i, card: p[i] });
      if (b[i]) out.push({ side: "banco", pos: i, card: b[i] });
    }
    if (p[2]) out.push({ side: "punto", pos: 2, card: p[2] });
    if (b[2]) out.push({ side: "banco", pos: 2, card: b[2] });
    return out;
  }

  function renderCoup() {
    var c = state.coup;
    $("c-coup").textContent = c ? c.coup_id : "\u2013";
    var view = $("coup-view");
    ["punto", "banco"].forEach(function (side) {
      var box = $("cards-" + side);
      box.textContent = "";
      var cards = (c && c[side]) || [];
      var sources = (c && c.card_sources && c.card_sources[side]) || [];
      cards.forEach(function (code, i) { box.appendChild(cardChip(code, sources[i] && sources[i].source)); });
      $("total-" + side).textContent = cards.length ? String(c[side + "_total"]) : "";
      $("hand-" + side).classList.toggle("next", !!(c && c.next_side === side && !c.held && !c.complete));
    });
    var st = "empty", status = t("console.coup.bets");
    var awaited = awaitedCard();
    if (!c) { status = t("console.coup.waiting"); }
    else if (c.voided) { st = "void"; status = t("console.coup.void", { coup: c.coup_id }); }
    else if (c.held) { st = "held"; status = t("console.coup.held", { coup: c.coup_id }); }
    else if (awaited) { st = "awaiting"; status = t(awaited === "unreadable" ? "console.coup.unreadable" : "console.coup.linkdown"); }
    else if (c.settled) { st = "settled"; status = t("console.coup.settled", { coup: c.coup_id, punto: c.punto_total, banco: c.banco_total }); }
    else if (c.complete) { st = "complete"; status = t("console.coup.complete"); }
    else if ((c.punto || []).length + (c.banco || []).length > 0) { st = "dealing"; status = t("console.coup.dealing"); }
    else if (state.shoe && state.shoe.shoe_over) { st = "over"; status = t("console.coup.shoeover"); }
    view.dataset.state = st;
    $("coup-status").textContent = status;
    $("next-card").textContent = c && c.next_side && !c.held && !c.complete ?
      t("console.coup.next", { side: t("common." + c.next_side) }) : "";

    // The picker: an awaited card. The held coup: its evidence and the supervisor's choices.
    var picker = $("picker");
    picker.hidden = !awaited;
    if (awaited) {
      $("picker-title").textContent = t(awaited === "unreadable" ? "console.picker.unreadable" : "console.picker.linkdown",
                                        { side: c.next_side ? t("common." + c.next_side) : "" });
      renderPick();
    }
    var held = $("held");
    held.hidden = !(c && c.held);
    if (c && c.held) {
      var ev = $("held-evidence");
      ev.textContent = "";
      coupAlerts(c).forEach(function (a) {
        var li = el("li", "sev-" + a.severity);
        li.appendChild(el("b", null, humanKind(a.kind)));
        li.appendChild(el("span", null, a.message || ""));
        var facts = evidenceFacts(a.evidence);
        if (facts) li.appendChild(el("small", "facts", facts));
        li.dataset.kind = a.kind;
        ev.appendChild(li);
      });
      var resolves = state.who && (state.who.role === "supervisor" || state.who.role === "pit");
      $("held-note").textContent = state.who && !resolves ? t("console.held.supervisor_only") : "";
    }
    var attention = c && c.held ? "held" : awaited ? "awaiting" : "";
    if (attention && attention !== state.attention) showTab("coup");
    state.attention = attention;
    $("console").dataset.attention = attention;
  }

  function pickerButtons(ranksBox, suitsBox, pick, onChange) {
    if (!ranksBox.children.length) {
      RANKS.forEach(function (r) {
        var b = button("rank", r === "T" ? "10" : r, function () { pick.rank = r; onChange(); });
        b.dataset.rank = r;
        ranksBox.appendChild(b);
      });
      SUITS.forEach(function (s) {
        var b = button("suit " + (s === "H" || s === "D" ? "red" : "black"), SUIT_GLYPH[s], function () { pick.suit = s; onChange(); });
        b.dataset.suit = s;
        b.title = t("suit." + s);
        suitsBox.appendChild(b);
      });
    }
    ranksBox.querySelectorAll(".rank").forEach(function (b) { b.classList.toggle("on", b.dataset.rank === pick.rank); });
    suitsBox.querySelectorAll(".suit").forEach(function (b) { b.classList.toggle("on", b.dataset.suit === pick.suit); });
  }

  function renderPick() {
    var pick = state.pick;
    pickerButtons($("ranks"), $("suits"), pick, renderPick);
    var code = pick.rank && pick.suit ? pick.rank + pick.suit : null;
    $("picked").textContent = code ? cardLabel(code) : "\u2013";
    $("picked").dataset.code = code || "";
    $("enter-card").disabled = !code;
  }

  function enterCard() {
    var pick = state.pick;
    if (!pick.rank || !pick.suit) return;
    var code = pick.rank + pick.suit;
    var reason = awaitedCard() === "link_down" ? t("console.picker.reason_link") : t("console.picker.reason_unreadable");
    $("enter-card").disabled = true;
    api("POST", "coup/card", { card: code, reason: reason }).then(function (res) {
      if (report(res, t("console.picker.done", { card: cardLabel(code) }))) state.pick = { rank: null, suit: null };
      renderCoup();
    });
  }

  // ------------------------------------------------------------------ reasons (every supervisor action has one)

  var sheet = null;   // {title, reasons, correct: bool, run(reason, extra)}

  function openSheet(spec) {
    sheet = spec;
    sheet.reason = null;
    sheet.pick = { rank: null, suit: null, index: null };
    $("reason-title").textContent = spec.title;
    var box = $("reasons");
    box.textContent = "";
    spec.reasons.forEach(function (key) {
      var b = button("reason", t(key), function () {
        sheet.reason = t(key);
        box.querySelectorAll(".reason").forEach(function (x) { x.classList.toggle("on", x === b); });
        $("reason-text").value = "";
        updateSheet();
      });
      box.appendChild(b);
    });
    $("reason-text").value = "";
    $("correct-box").hidden = !spec.correct;
    if (spec.correct) renderCorrect();
    $("reason-sheet").hidden = false;
    updateSheet();
  }

  function renderCorrect() {
    var box = $("correct-cards");
    box.textContent = "";
    dealingOrder(state.coup || {}).forEach(function (d, i) {
      var b = button("which", "", function () { sheet.pick.index = i; renderCorrect(); updateSheet(); });
      b.appendChild(el("span", "which-side", t("common." + d.side).slice(0, 1)));
      b.appendChild(cardChip(d.card));
      b.dataset.index = String(i);
      b.classList.toggle("on", sheet.pick.index === i);
      box.appendChild(b);
    });
    pickerButtons($("correct-ranks"), $("correct-suits"), sheet.pick, function () { renderCorrect(); updateSheet(); });
  }

  function sheetReason() {
    var typed = $("reason-text").value.trim();
    return typed || sheet.reason;
  }

  function updateSheet() {
    if (!sheet) return;
    var ok = !!sheetReason();
    if (sheet.correct) ok = ok && sheet.pick.index !== null && !!sheet.pick.rank && !!sheet.pick.suit;
    $("reason-go").disabled = !ok;
  }

  function closeSheet() {
    sheet = null;
    $("reason-sheet").hidden = true;
  }

  function runSheet() {
    if (!sheet) return;
    var spec = sheet, reason = sheetReason();
    $("reason-go").disabled = true;
    spec.run(reason, spec.pick).then(function (res) {
      if (res && res.ok) closeSheet();
      else updateSheet();
    });
  }

  function coupAction(kind) {
    var c = state.coup;
    if (!c) return;
    var spec = {
      confirm: { title: t("console.held.confirm_title", { coup: c.coup_id }), path: "coup/resolve",
                 reasons: ["reason.checked", "reason.counter", "reason.misread_ok"], done: "console.held.confirmed" },
      void: { title: t("console.held.void_title", { coup: c.coup_id }), path: "coup/void",
              reasons: ["reason.misdeal", "reason.exposed", "reason.shoe_fault"], done: "console.held.voided" },
      correct: { title: t("console.held.correct_title", { coup: c.coup_id }), path: "coup/correct", correct: true,
                 reasons: ["reason.misread", "reason.camera_wrong", "reason.checked"], done: "console.held.corrected" },
    }[kind];
    openSheet({
      title: spec.title, reasons: spec.reasons, correct: !!spec.correct,
      run: function (reason, pick) {
        var body = { coup_id: c.coup_id, reason: reason };
        if (spec.correct) { body.index = pick.index; body.card = pick.rank + pick.suit; }
        return api("POST", spec.path, body).then(function (res) {
          report(res, t(spec.done, { coup: c.coup_id }));
          return res;
        });
      },
    });
  }

  // ------------------------------------------------------------------ alerts

  function renderAlerts() {
    var list = $("alerts");
    list.textContent = "";
    var active = state.alerts.slice().sort(function (a, b) { return (b.t || 0) - (a.t || 0); });
    $("alert-count").textContent = active.length ? String(active.length) : "";
    $("alerts-empty").hidden = active.length > 0;
    active.forEach(function (a) {
      var li = el("li", "alert sev-" + a.severity);
      li.dataset.id = a.id;
      li.dataset.kind = a.kind;
      var text = el("div", "alert-text");
      text.appendChild(el("b", null, humanKind(a.kind)));
      text.appendChild(el("span", "alert-coup", a.shoe + "-" + a.coup));
      text.appendChild(el("span", "alert-message", a.message || ""));
      if (a.acknowledged) text.appendChild(el("span", "acked", t("console.alerts.acked", { who: a.acknowledged.by })));
      li.appendChild(text);
      var acts = el("div", "alert-actions");
      if (!a.acknowledged) acts.appendChild(button("ack", t("console.alerts.ack"), function () { alertAction(a, "ack"); }));
      acts.appendChild(button("clear", t("console.alerts.clear"), function () { alertAction(a, "clear"); }));
      li.appendChild(acts);
      list.appendChild(li);
    });
  }

  function alertAction(a, action) {
    openSheet({
      title: t(action === "ack" ? "console.alerts.ack_title" : "console.alerts.clear_title", { kind: humanKind(a.kind) }),
      reasons: action === "ack" ? ["reason.seen", "reason.investigating"] : ["reason.checked", "reason.resolved"],
      run: function (reason) {
        return api("POST", "alerts/" + encodeURIComponent(a.id) + "/" + action, { reason: reason }).then(function (res) {
          report(res, t(action === "ack" ? "console.alerts.acked_done" : "console.alerts.cleared_done", { kind: humanKind(a.kind) }));
          return res;
        });
      },
    });
  }

  // ------------------------------------------------------------------ bets

  function limits() { return (state.config && state.config.limits) || {}; }

  function betProblems() {
    var lim = limits(), out = {}, totals = { punto: 0, banco: 0, tie: 0 };
    Object.keys(state.bets).forEach(function (key) {
      var amt = state.bets[key], kind = key.split(":")[1], l = lim[kind];
      totals[kind] += amt;
      if (l && amt > 0 && (amt < Number(l.min) || amt > Number(l.max))) out[key] = true;
    });
    var over = KINDS.filter(function (k) { return lim[k] && totals[k] > Number(lim[k].table_max); });
    return { cells: out, totals: totals, over: over };
  }

  // Kinds are rows and seats columns: 3 rows of 48 px buttons fit the dealer's 480 px screen.
  function renderBets() {
    var seats = (state.config && state.config.seats) || 7;
    var table = $("seats");
    var lim = limits();
    var problems = betProblems();
    table.textContent = "";
    var head = el("tr");
    head.appendChild(el("th", null, t("console.bets.seat")));
    for (var seat = 1; seat <= seats; seat++) head.appendChild(el("th", "seat", String(seat)));
    head.appendChild(el("th", "sum", t("console.bets.sum")));
    table.appendChild(head);
    KINDS.forEach(function (k) {
      var tr = el("tr", "kind-row " + k);
      var th = el("th", "kind " + k, t("common." + k));
      if (lim[k]) th.appendChild(el("small", null, amount(lim[k].min) + "\u2013" + amount(lim[k].max)));
      tr.appendChild(th);
      for (var seat = 1; seat <= seats; seat++) {
        var key = seat + ":" + k;
        var td = el("td");
        var amt = state.bets[key] || 0;
        var b = button("bet " + k, amt ? amount(amt) : "\u00b7", selectCell(key));
        b.dataset.cell = key;
        b.classList.toggle("on", state.betCell === key);
        b.classList.toggle("bad", !!problems.cells[key]);
        td.appendChild(b);
        tr.appendChild(td);
      }
      tr.appendChild(el("td", "sum" + (problems.over.indexOf(k) >= 0 ? " bad" : ""), amount(problems.totals[k])));
      table.appendChild(tr);
    });
    var chips = $("chips");
    if (!chips.querySelector(".chip")) {
      var place = $("bets-place"), clear = $("bets-clear");
      CHIPS.forEach(function (v) {
        var b = button("chip", "+" + amount(v), function () { addChip(v); });
        b.dataset.chip = String(v);
        chips.insertBefore(b, clear);
      });
      var z = button("chip zero", t("console.bets.zero"), function () { addChip(0); });
      z.dataset.chip = "0";
      chips.insertBefore(z, clear);
      chips.appendChild(place);
    }
    $("bets-for").textContent = state.betsOpenFor ? t("console.bets.for", { coup: state.betsOpenFor }) : t("console.bets.closed");
    var staked = problems.totals.punto + problems.totals.banco + problems.totals.tie;
    $("bets-total").textContent = t("console.bets.total", { amount: amount(staked) });
  }

  function selectCell(key) {
    return function () { state.betCell = key; renderBets(); };
  }

  function addChip(v) {
    if (!state.betCell) { message(t("console.bets.pick_cell"), "info"); return; }
    if (v === 0) delete state.bets[state.betCell];
    else state.bets[state.betCell] = (state.bets[state.betCell] || 0) + v;
    renderBets();
  }

  function placeBets() {
    var bets = Object.keys(state.bets).filter(function (k) { return state.bets[k] > 0; }).map(function (k) {
      var parts = k.split(":");
      return { seat: Number(parts[0]), kind: parts[1], amount: String(state.bets[k]) };
    });
    if (!bets.length) { message(t("console.bets.none"), "info"); return; }
    var body = { reason: t("console.bets.reason"), bets: bets };
    if (state.betsOpenFor) body.coup_id = state.betsOpenFor;
    api("POST", "bets", body).then(function (res) {
      if (report(res, t("console.bets.placed", { coup: res.data && res.data.coup_id, n: bets.length }))) {
        state.bets = {};
        state.betCell = null;
        renderBets();
      }
    });
  }

  function refreshBetsOpenFor() {
    api("GET", "coup/current").then(function (res) {
      if (res.ok) { state.betsOpenFor = res.data.bets_open_for; renderBets(); }
    });
  }

  function refreshSettlement() {
    var r = state.lastResult;
    var box = $("settlement");
    if (!r || !state.token) { box.textContent = ""; return; }
    api("GET", "coups/" + encodeURIComponent(r.coup_id) + "/settlement").then(function (res) {
      box.textContent = "";
      box.appendChild(el("div", "settle-title", t("console.settle.title", { coup: r.coup_id })));
      if (res.status === 404) { box.appendChild(el("div", "muted", t("console.settle.none"))); return; }
      if (!res.ok) { box.appendChild(el("div", "muted", res.error)); return; }
      var s = res.data;
      var tbl = el("table", "settle");
      (s.bets || []).forEach(function (b) {
        var tr = el("tr", "outcome-" + (b.outcome || "open"));
        [t("console.bets.seat") + " " + b.seat, t("common." + b.kind), amount(b.amount),
         b.outcome ? t("outcome." + b.outcome) : "", b.net !== undefined ? amount(b.net) : ""].forEach(function (v) {
          tr.appendChild(el("td", null, v));
        });
        tbl.appendChild(tr);
      });
      box.appendChild(tbl);
      if (s.totals) {
        box.appendChild(el("div", "settle-totals", t("console.settle.totals", {
          staked: amount(s.totals.staked), returned: amount(s.totals.returned), net: amount(s.totals.net) })));
      }
    });
  }

  // ------------------------------------------------------------------ recall

  function refreshRecall() {
    if (!state.token) return;
    api("GET", "coups?last=" + state.recallLast).then(function (res) {
      var table = $("recall");
      table.textContent = "";
      if (!res.ok) { table.appendChild(el("tr")).appendChild(el("td", null, res.error)); return; }
      var coups = (res.data.coups || []).slice().reverse();   // newest first
      coups.forEach(function (r) {
        var tr = el("tr", "coup-row " + (r.voided ? "void" : r.winner || ""));
        tr.dataset.coup = r.coup_id;
        tr.appendChild(el("td", "id", r.coup_id));
        var result = r.voided ? t("console.recall.void") :
          r.winner === "tie" ? t("console.recall.tie", { punto: r.punto_total, banco: r.banco_total }) :
          t("console.recall.win", { side: t("common." + r.winner), punto: r.punto_total, banco: r.banco_total });
        tr.appendChild(el("td", "result", result));
        ["punto", "banco"].forEach(function (side) {
          var td = el("td", "cards " + side);
          var dealt = (r.dealt || []).filter(function (d) { return d.side === side; });
          (r[side] || []).forEach(function (code, i) { td.appendChild(cardChip(code, dealt[i] && dealt[i].source)); });
          tr.appendChild(td);
        });
        var flags = [];
        if (r.natural) flags.push(t("console.recall.natural"));
        if (r.banco_pair) flags.push(t("console.recall.banco_pair"));
        if (r.punto_pair) flags.push(t("console.recall.punto_pair"));
        if (r.revision) flags.push(t("console.recall.corrected"));
        tr.appendChild(el("td", "flags", flags.join(" \u00b7 ")));
        table.appendChild(tr);
      });
      $("recall-more").hidden = coups.length < state.recallLast;
    });
  }

  // ------------------------------------------------------------------ shoe

  function renderShoe() {
    var s = state.shoe;
    var box = $("shoe-facts");
    box.textContent = "";
    if (s) {
      [["console.shoe.no", s.shoe], ["console.shoe.left", s.remaining], ["console.shoe.dealt", s.dealt],
       ["console.shoe.coups", s.coups]].forEach(function (f) {
        var d = el("div", "fact");
        d.appendChild(el("span", null, t(f[0])));
        d.appendChild(el("b", null, String(f[1])));
        box.appendChild(d);
      });
      if (s.shoe_over) box.appendChild(el("div", "fact warn", t("console.shoe.over")));
      else if (s.cut_card_out) box.appendChild(el("div", "fact warn", t("console.shoe.cut")));
    }
    var decks = $("decks");
    if (!decks.children.length) {
      [4, 6, 8].forEach(function (n) {
        var b = button("deck", t("console.shoe.decks", { n: n }), function () { state.decks = n; renderShoe(); });
        b.dataset.decks = String(n);
        decks.appendChild(b);
      });
    }
    if (state.decks === null) state.decks = (state.config && state.config.decks) || 8;
    decks.querySelectorAll(".deck").forEach(function (b) { b.classList.toggle("on", Number(b.dataset.decks) === state.decks); });
  }

  function newShoe() {
    openSheet({
      title: t("console.shoe.new_title", { n: state.decks }),
      reasons: ["reason.shoe_done", "reason.new_cards"],
      run: function (reason) {
        return api("POST", "shoe/new", { reason: reason, decks: state.decks }).then(function (res) {
          report(res, t("console.shoe.started"));
          return res;
        });
      },
    });
  }

  // ------------------------------------------------------------------ tabs

  function showTab(name) {
    state.tab = name;
    document.querySelectorAll(".tab").forEach(function (b) { b.classList.toggle("on", b.dataset.tab === name); });
    document.querySelectorAll(".pane").forEach(function (p) { p.hidden = p.dataset.pane !== name; });
    if (name === "recall") refreshRecall();
    if (name === "bets") { renderBets(); refreshSettlement(); }
  }

  // ------------------------------------------------------------------ start

  function wire() {
    $("signin-go").addEventListener("click", function () {
      var token = $("token").value.trim();
      if (token) signIn(token);
    });
    $("token").addEventListener("keydown", function (e) { if (e.key === "Enter") $("signin-go").click(); });
    $("signout").addEventListener("click", signOut);
    document.querySelectorAll(".tab").forEach(function (b) {
      b.addEventListener("click", function () { showTab(b.dataset.tab); });
    });
    $("enter-card").addEventListener("click", enterCard);
    $("held-confirm").addEventListener("click", function () { coupAction("confirm"); });
    $("held-correct").addEventListener("click", function () { coupAction("correct"); });
    $("held-void").addEventListener("click", function () { coupAction("void"); });
    $("reason-cancel").addEventListener("click", closeSheet);
    $("reason-go").addEventListener("click", runSheet);
    $("reason-text").addEventListener("input", function () {
      if ($("reason-text").value.trim()) $("reasons").querySelectorAll(".reason").forEach(function (x) { x.classList.remove("on"); });
      updateSheet();
    });
    $("bets-clear").addEventListener("click", function () { state.bets = {}; state.betCell = null; renderBets(); });
    $("bets-place").addEventListener("click", placeBets);
    $("recall-more").addEventListener("click", function () { state.recallLast += RECALL_STEP; refreshRecall(); });
    $("new-shoe").addEventListener("click", newShoe);
  }

  function start(cfg) {
    state.config = cfg || {};
    $("c-table").textContent = (state.config.table_id || "\u2013").toUpperCase();
    document.title = "Punto Banco \u00b7 " + t("console.title") + " \u00b7 " + (state.config.table_id || "");
    C.translate();
    wire();
    setConn("connecting");
    showTab("coup");
    renderCoup();
    renderAlerts();
    renderBets();
    renderShoe();
    var token = tokenFromFragment() || sessionStorage.getItem(TOKEN_KEY);
    document.documentElement.dataset.started = "1";
    if (token) signIn(token);
    else showScreen("signin");
  }

  window.shoeConsole = { state: state };

  var config = fetch("config.json", { cache: "no-store" })
    .then(function (r) { return r.ok ? r.json() : {}; })
    .catch(function () { return {}; });
  Promise.all([config, C.fontsReady()]).then(function (both) {
    var cfg = both[0];
    return C.loadLang(C.chooseLang(cfg.lang)).then(function () { start(cfg); });
  });
})();
