/* shoe-daemon scoreboard: draws one Punto Banco table from its MQTT topics (docs/display.md).
 *
 * config.json (served next to this file) gives the broker's websockets URL, the topic
 * prefix, the table limits and the table id; query parameters override it:
 *   ?broker=ws://host:9001  ?prefix=baccarat/t1  ?table=t1  ?username=..&password=..  ?alerts=off
 *   ?profile=player|dealer|pit (default: config.json's, from [display] profile)  ?lang=en|ru|bg|fi
 * A profile says what the screen may show: "player" no odds, no house edge, no alert (the
 * odds are never written into its DOM, and the odds topic is dropped); "dealer" the alerts but
 * no odds; "pit" the odds, the house edge and every alert, the player's advantage among them.
 * The page subscribes to <prefix>/# with QoS 1 over MQTT 3.1.1 (both Mosquitto and the
 * embedded broker speak it) and redraws on every message. Everything it shows comes from
 * retained topics, so a reconnect (the client retries every second, forever) redraws it all.
 */
(function () {
  "use strict";

  var SCHEMA = 1;
  var SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  var RANKS = { A: "A", T: "10", J: "J", Q: "Q", K: "K" };
  var SIDE_LETTER = { banco: "B", punto: "P", tie: "T" };
  var SEVERITY_RANK = { critical: 3, error: 2, warning: 1, info: 0 };
  var PROFILES = {
    player: { odds: false, alerts: false, advantage: false },
    dealer: { odds: false, alerts: true, advantage: false },
    pit: { odds: true, alerts: true, advantage: true },
  };
  var ADVANTAGE_ALERT = "odds_advantage";
  var DEDUPE_MAX = 4000;
  var TOAST_MS = 6000;

  var $ = function (id) { return document.getElementById(id); };
  var t = window.shoeCommon.t;     // the page's language (common.js, i18n/<lang>.json)
  var params = new URLSearchParams(window.location.search);

  var state = {
    config: null,
    profile: "dealer",
    shows: PROFILES.dealer,
    prefix: null,
    conn: "connecting",
    status: null,
    coup: null,
    results: {},        // coup_id -> latest result (highest revision)
    shoe: null,
    roads: null,
    stats: null,
    odds: null,
    alerts: [],
    sources: {},
    schemaWarning: null,
  };
  var client = null;

  // ------------------------------------------------------------------ helpers

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function setText(id, text) {
    var e = $(id);
    if (e && e.textContent !== String(text)) e.textContent = text;
  }

  function fnv1a(s) {
    var h = 0x811c9dc5;
    for (var i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    return (h >>> 0).toString(16);
  }

  function formatAmount(v) {
    if (v === undefined || v === null) return "";
    var n = Number(v);
    if (!isFinite(n)) return String(v);
    if (n >= 1e6 && n % 1e6 === 0) return n / 1e6 + "M";
    if (n >= 1e4 && n % 1e3 === 0) return n / 1e3 + "K";
    return n.toLocaleString("en-US", { maximumFractionDigits: 2 });
  }

  function pct(x, digits) {
    return (x * 100).toFixed(digits === undefined ? 2 : digits) + "%";
  }

  function humanKind(kind) {
    var key = "alert." + kind;
    var text = t(key);
    return text === key ? String(kind || "alert").replace(/_/g, " ").toUpperCase() : text;
  }

  function side(name) { return t("common." + name); }

  // Payload duplicates (QoS 1 is at-least-once, retained topics come again on every
  // subscribe) are byte-identical: remember a digest of the recent ones.
  var seenKeys = new Set();
  var seenOrder = [];
  function seenBefore(key) {
    if (seenKeys.has(key)) return true;
    seenKeys.add(key);
    seenOrder.push(key);
    if (seenOrder.length > DEDUPE_MAX) seenKeys.delete(seenOrder.shift());
    return false;
  }

  // ------------------------------------------------------------------ cards

  function cardElement(code, side, index, coupId) {
    var rank = code.slice(0, -1);
    var suit = code.slice(-1);
    var red = suit === "H" || suit === "D";
    var label = RANKS[rank] || rank;
    var glyph = SUITS[suit] || "?";
    var card = el("div", "card " + (red ? "red" : "black") + (rank.match(/[JQK]/) ? " face" : ""));
    card.dataset.code = code;
    card.dataset.side = side;
    card.dataset.pos = String(index);
    card.dataset.coup = coupId;
    var tl = el("span", "corner tl");
    tl.appendChild(el("b", null, label));
    tl.appendChild(el("i", null, glyph));
    var br = el("span", "corner br");
    br.appendChild(el("b", null, label));
    br.appendChild(el("i", null, glyph));
    var pip = el("span", "pip", rank.match(/[JQK]/) ? label : glyph);
    if (rank.match(/[JQK]/)) pip.appendChild(el("i", null, glyph));
    card.appendChild(tl);
    card.appendChild(pip);
    card.appendChild(br);
    return card;
  }

  // A card the shoe did not read gets a badge: who produced it (coup/current's card_sources,
  // coup/card's source and confidence). Null for the shoe's own cards.
  function sourceBadge(src) {
    var source = src && src.source;
    if (!source || source === "shoe") return null;
    var conf = typeof src.confidence === "number" ? pct(src.confidence, 1) : null;
    var text, title;
    if (source === "camera") {
      text = t("display.badge.camera") + (conf ? " " + conf : "");
      title = conf ? t("display.badge.camera_title_conf", { conf: conf }) : t("display.badge.camera_title");
    } else if (source === "api" || source === "manual") {
      text = t("display.badge.manual");
      title = t("display.badge.manual_title", { source: source });
    } else {
      text = String(source).toUpperCase();
      title = t("display.badge.other_title", { source: source });
    }
    var b = el("span", "src-badge " + (source === "camera" ? "camera" : "manual"), text);
    b.title = title;
    return b;
  }

  function sourceKey(src) {
    return src && src.source ? src.source + (typeof src.confidence === "number" ? ":" + src.confidence : "") : "shoe";
  }

  function drawCards(side, codes, placeholders, coupId, sources) {
    var box = $("cards-" + side);
    var wraps = box.querySelectorAll(".card-wrap:not(.empty)");
    var same = wraps.length <= codes.length;
    for (var i = 0; same && i < wraps.length; i++) {
      var shown = wraps[i].firstChild.dataset;
      if (shown.code !== codes[i] || shown.coup !== coupId || shown.source !== sourceKey(sources[i])) same = false;
    }
    if (!same) {
      box.textContent = "";
      wraps = [];
    }
    box.querySelectorAll(".card-wrap.empty").forEach(function (e) { e.remove(); });
    for (var j = wraps.length; j < codes.length; j++) {
      var wrap = el("div", "card-wrap" + (j === 2 ? " third" : "") + (same ? " dealt" : ""));
      var card = cardElement(codes[j], side, j, coupId);
      card.dataset.source = sourceKey(sources[j]);
      wrap.appendChild(card);
      var badge = sourceBadge(sources[j]);
      if (badge) wrap.appendChild(badge);
      box.appendChild(wrap);
    }
    for (var k = codes.length; k < placeholders; k++) {
      box.appendChild(el("div", "card-wrap empty"));
    }
  }

  // ------------------------------------------------------------------ the coup

  function currentResult() {
    var c = state.coup;
    if (!c || !c.settled) return null;
    return state.results[c.coup_id] || null;
  }

  function renderCoup() {
    var c = state.coup;
    var shoe = state.shoe;
    setText("shoe-no", c ? c.shoe : shoe ? shoe.shoe : "\u2013");
    setText("coup-no", c ? c.coup : "\u2013");
    var coupEl = $("coup");
    var result = currentResult();
    var sides = ["punto", "banco"];
    var open = c && !c.complete && !c.voided;
    sides.forEach(function (side) {
      var cards = (c && c[side]) || [];
      var sources = (c && c.card_sources && c.card_sources[side]) || [];
      drawCards(side, cards, open ? 2 : 0, c ? c.coup_id : "", sources);
      var total = $("total-" + side);
      var shown = cards.length ? String(c[side + "_total"]) : "";
      if (total.textContent !== shown) {
        total.textContent = shown;
        total.classList.remove("bump");
        void total.offsetWidth;   // restart the animation
        if (shown) total.classList.add("bump");
      }
      var sideEl = $("side-" + side);
      sideEl.classList.toggle("next", !!(c && c.next_side === side && !c.held));
      sideEl.classList.toggle("win", !!(result && (result.winner === side || result.winner === "tie")));
      sideEl.classList.toggle("lose", !!(result && result.winner !== side && result.winner !== "tie"));
      var chips = $("chips-" + side);
      chips.textContent = "";
      if (result) {
        var natural = result.natural && cards.length === 2 && c[side + "_total"] >= 8;
        if (natural) chips.appendChild(el("span", "chip natural", t("display.natural_n", { n: c[side + "_total"] })));
        if (result[side + "_pair"]) chips.appendChild(el("span", "chip pair", t("display.pair")));
      }
    });

    var bar = $("result-bar");
    var main = "";
    var winner = "";
    var st = "empty";
    var chips = $("result-chips");
    chips.textContent = "";
    if (!c) {
      main = t("display.waiting");
    } else if (c.voided) {
      main = t("display.void");
      st = "void";
    } else if (c.held) {
      main = t("display.held");
      st = "held";
    } else if (result) {
      winner = result.winner;
      st = "settled";
      if (result.winner === "tie") {
        main = t("display.tie_result", { punto: result.punto_total, banco: result.banco_total });
      } else {
        var w = result.winner === "banco" ? result.banco_total : result.punto_total;
        var l = result.winner === "banco" ? result.punto_total : result.banco_total;
        main = t("display.wins", { side: side(result.winner), w: w, l: l });
      }
      if (result.natural) {
        chips.appendChild(el("span", "chip natural", result.natural_total ? t("display.natural_n", { n: result.natural_total }) : t("display.natural")));
      }
      if (result.banco_pair) chips.appendChild(el("span", "chip pair banco", t("display.banco_pair")));
      if (result.punto_pair) chips.appendChild(el("span", "chip pair punto", t("display.punto_pair")));
    } else if (c.complete) {
      main = t("display.totals", { punto: c.punto_total, banco: c.banco_total });
      chips.appendChild(el("span", "chip wait", t("display.awaiting_confirm")));
      st = "complete";
    } else if ((c.punto || []).length + (c.banco || []).length > 0) {
      main = t("display.totals", { punto: c.punto_total, banco: c.banco_total });
      if (c.next_side) chips.appendChild(el("span", "chip next " + c.next_side, t("display.next", { side: side(c.next_side) })));
      st = "dealing";
    } else if (shoe && shoe.shoe_over) {
      main = t("display.shoe_over_new");
      st = "over";
    } else if (c.burn_due > 0) {
      main = t("display.burn");
      st = "burn";
    } else {
      main = t("display.place_bets");
    }
    if (c && c.awaiting && c.awaiting.unreadable > 0) {
      chips.appendChild(el("span", "chip wait", t("display.card_unreadable")));
    }
    setText("result-main", main);
    bar.dataset.winner = winner;
    coupEl.dataset.state = st;
    var over = !!(shoe && shoe.shoe_over);
    var last = !!((c && c.last_hand) || (shoe && shoe.last_hand)) && !over;
    var ribbon = $("last-hand");
    ribbon.hidden = !(last || over);
    ribbon.classList.toggle("over", over);
    setText("last-hand", over ? t("display.shoe_over_new") : t("display.last_hand"));
    document.body.classList.toggle("is-last-hand", last);
  }

  function applyCard(p) {
    if (p.role !== "coup" || !p.side || (p.side !== "punto" && p.side !== "banco")) return;
    var c = state.coup;
    if (c && (p.shoe < c.shoe || (p.shoe === c.shoe && p.coup < c.coup))) return;  // an old coup's card
    if (!c || c.shoe !== p.shoe || c.coup !== p.coup) {
      c = {
        shoe: p.shoe, coup: p.coup, coup_id: p.shoe + "-" + p.coup, punto: [], banco: [],
        punto_total: 0, banco_total: 0, next_side: null, complete: false, settled: false,
        held: false, voided: false, last_hand: !!(state.shoe && state.shoe.last_hand), burn_due: 0,
      };
    }
    var have = c.punto.length + c.banco.length;
    if (typeof p.index === "number" && p.index < have) return;   // coup/current already has it
    var next = Object.assign({}, c);
    next[p.side] = c[p.side].concat([p.card]);
    var known = c.card_sources || {};
    next.card_sources = { punto: known.punto || [], banco: known.banco || [] };
    var sources = next.card_sources[p.side].slice(0, c[p.side].length);
    while (sources.length < c[p.side].length) sources.push({});
    next.card_sources[p.side] = sources.concat([{ source: p.source, confidence: p.confidence }]);
    next.punto_total = p.punto_total;
    next.banco_total = p.banco_total;
    next.next_side = p.next_side;
    next.complete = p.next_side === null;
    state.coup = next;
  }

  function addResult(r) {
    if (!r || !r.coup_id) return;
    var old = state.results[r.coup_id];
    if (!old || (r.revision || 0) >= (old.revision || 0)) state.results[r.coup_id] = r;
    var keys = Object.keys(state.results);
    if (keys.length > 60) delete state.results[keys[0]];
  }

  // ------------------------------------------------------------------ shoe, odds, limits

  function renderShoe() {
    var s = state.shoe;
    if (!s) return;
    setText("cards-left", s.remaining);
    var frac = s.cards ? Math.max(0, Math.min(1, s.remaining / s.cards)) : 0;
    $("shoe-bar-fill").style.width = (frac * 100).toFixed(1) + "%";
    var facts = $("shoe-facts");
    facts.textContent = "";
    facts.appendChild(el("span", null, t("display.decks", { n: s.decks })));
    facts.appendChild(el("span", null, t("display.dealt", { n: s.dealt })));
    if (s.burn_card) facts.appendChild(el("span", null, t("display.burn_card", { card: s.burn_card })));
    if (s.shoe_over) facts.appendChild(el("span", "warn", t("display.shoe_over")));
    else if (s.cut_card_out) facts.appendChild(el("span", "warn", t("display.cut_card_out")));
    if (s.burn_due > 0) facts.appendChild(el("span", "warn", t("display.burn_due", { n: s.burn_due })));
    renderCoup();
  }

  function renderLimits() {
    var lim = (state.config && state.config.limits) || {};
    ["banco", "punto", "tie"].forEach(function (bet) {
      var cell = $("bet-" + bet).querySelector(".lim");
      var l = lim[bet];
      cell.textContent = l ? formatAmount(l.min) + " \u2013 " + formatAmount(l.max) : "\u2013";
    });
  }

  // A profile without odds has no WIN or EDGE column at all: nothing to read in its DOM.
  function applyProfile() {
    document.body.dataset.profile = state.profile;
    if (state.shows.odds) return;
    document.querySelectorAll(".bets .prob, .bets .edge, .bets th.odds-col, #odds-note").forEach(function (e) {
      e.remove();
    });
  }

  function renderOdds() {
    if (!state.shows.odds) return;
    var o = state.odds;
    var note = $("odds-note");
    ["banco", "punto", "tie"].forEach(function (bet) {
      var row = $("bet-" + bet);
      var ok = o && o.available && o.probability && o.house_edge;
      row.querySelector(".prob").textContent = ok ? pct(o.probability[bet]) : "\u2013";
      row.querySelector(".edge").textContent = ok ? pct(o.house_edge[bet]) : "\u2013";
      row.classList.toggle("player-edge", !!(ok && o.house_edge[bet] < 0));
    });
    if (!o) note.textContent = "";
    else if (!o.available) note.textContent = t("display.odds_unavailable");
    else note.textContent = t("display.live_odds", { n: o.cards || "" });
  }

  // ------------------------------------------------------------------ roads

  function gridGeometry(road, rows, minCell) {
    var grid = road.querySelector(".grid");
    var h = road.clientHeight;
    var w = road.clientWidth - (road.querySelector(".grid").offsetLeft || 0);
    var cell = Math.max(minCell || 4, Math.floor(h / rows));
    var cols = Math.max(1, Math.floor(w / cell));
    grid.style.setProperty("--cell", cell + "px");
    grid.style.width = cols * cell + "px";
    grid.style.height = rows * cell + "px";
    return { grid: grid, cell: cell, cols: cols };
  }

  function place(e, col, row, cell, offset) {
    e.style.left = (col - offset) * cell + "px";
    e.style.top = row * cell + "px";
    e.style.width = cell + "px";
    e.style.height = cell + "px";
  }

  function scrollOffset(used, cols) {
    // keep the newest column in view, with one empty column after it
    return Math.max(0, used - (cols - 1));
  }

  function pairDots(e, c) {
    if (c.banco_pair) e.appendChild(el("i", "dot banco"));
    if (c.punto_pair) e.appendChild(el("i", "dot punto"));
  }

  function drawBead(data) {
    var road = $("bead-plate");
    var g = gridGeometry(road, data.rows || 6);
    var frag = document.createDocumentFragment();
    var used = data.width || 0;
    var off = scrollOffset(used, g.cols);
    (data.cells || []).forEach(function (c) {
      var e = el("div", "cell bead " + c.winner);
      e.appendChild(el("span", "disc", SIDE_LETTER[c.winner] || "?"));
      pairDots(e, c);
      place(e, c.col, c.row, g.cell, off);
      frag.appendChild(e);
    });
    g.grid.textContent = "";
    g.grid.appendChild(frag);
  }

  function drawBigRoad(data) {
    var road = $("big-road");
    var g = gridGeometry(road, data.rows || 6);
    var frag = document.createDocumentFragment();
    var off = scrollOffset(data.width || 0, g.cols);
    (data.cells || []).forEach(function (c) {
      var e = el("div", "cell br " + c.winner);
      e.dataset.col = c.col;
      e.dataset.row = c.row;
      e.appendChild(el("span", "ring"));
      if (c.ties > 0) {
        e.appendChild(el("span", "tie-slash"));
        if (c.ties > 1) e.appendChild(el("span", "tie-count", String(c.ties)));
      }
      pairDots(e, c);
      place(e, c.col, c.row, g.cell, off);
      frag.appendChild(e);
    });
    g.grid.textContent = "";
    g.grid.appendChild(frag);
  }

  function drawDerived(id, data, kind) {
    var road = $(id);
    var g = gridGeometry(road, (data && data.rows) || 6);
    var frag = document.createDocumentFragment();
    var off = scrollOffset((data && data.width) || 0, g.cols);
    ((data && data.cells) || []).forEach(function (c) {
      var e = el("div", "cell dr " + kind + " " + c.color);
      e.appendChild(el("span", "mark"));
      place(e, c.col, c.row, g.cell, off);
      frag.appendChild(e);
    });
    g.grid.textContent = "";
    g.grid.appendChild(frag);
  }

  function drawAsk(id, ask) {
    var box = $(id).querySelector(".ask-marks");
    box.textContent = "";
    [["big_eye_boy", "eye"], ["small_road", "small"], ["cockroach_pig", "roach"]].forEach(function (r) {
      var color = ask ? ask[r[0]] : null;
      var e = el("span", "ask-mark " + r[1] + " " + (color || "none"));
      e.appendChild(el("span", "mark"));
      box.appendChild(e);
    });
  }

  function renderRoads() {
    var r = state.roads;
    var roads = $("roads");
    if (!r) {
      drawBead({ rows: 6, cells: [] });
      drawBigRoad({ rows: 6, cells: [] });
      drawDerived("big-eye-boy", null, "eye");
      drawDerived("small-road", null, "small");
      drawDerived("cockroach-pig", null, "roach");
      drawAsk("ask-banco", null);
      drawAsk("ask-punto", null);
      return;
    }
    drawBead(r.bead_plate || { rows: 6, cells: [] });
    drawBigRoad(r.big_road || { rows: 6, cells: [] });
    drawDerived("big-eye-boy", r.big_eye_boy, "eye");
    drawDerived("small-road", r.small_road, "small");
    drawDerived("cockroach-pig", r.cockroach_pig, "roach");
    drawAsk("ask-banco", r.ask_banco);
    drawAsk("ask-punto", r.ask_punto);
    roads.dataset.seq = r.seq;
    roads.dataset.cells = (r.big_road && r.big_road.cells ? r.big_road.cells.length : 0);
  }

  function renderStats() {
    var s = state.stats;
    if (!s) return;
    setText("n-banco", s.banco);
    setText("n-punto", s.punto);
    setText("n-tie", s.tie);
    setText("n-coups", s.coups);
    var ex = $("stat-extras");
    ex.textContent = "";
    function fact(cls, label, value) {
      var e = el("span", cls, label + " ");
      e.appendChild(el("b", null, String(value)));
      ex.appendChild(e);
    }
    fact("banco", t("display.banco_pair"), s.banco_pairs);
    fact("punto", t("display.punto_pair"), s.punto_pairs);
    if (s.naturals !== null && s.naturals !== undefined) fact(null, t("display.naturals"), s.naturals);
    var cs = s.current_streak;
    if (cs && cs.winner) fact(cs.winner, t("display.streak", { side: SIDE_LETTER[cs.winner] }), cs.length);
    fact("banco", t("display.longest", { side: "B" }), s.longest_banco_streak);
    fact("punto", t("display.longest", { side: "P" }), s.longest_punto_streak);
  }

  // ------------------------------------------------------------------ alerts, status

  function renderAlerts() {
    var banner = $("alert-banner");
    if (!alertsShown()) { banner.hidden = true; return; }
    var active = (state.alerts || []).filter(function (a) { return a && a.severity !== "info" && alertShown(a); });
    active.sort(function (a, b) {
      return (SEVERITY_RANK[b.severity] || 0) - (SEVERITY_RANK[a.severity] || 0) || (a.t || 0) - (b.t || 0);
    });
    if (!active.length) {
      banner.hidden = true;
      banner.dataset.severity = "";
      return;
    }
    var top = active[0];
    banner.hidden = false;
    banner.dataset.severity = top.severity;
    banner.dataset.kind = top.kind;
    setText("alert-kind", humanKind(top.kind));
    setText("alert-message", top.message || "");
    setText("alert-more", active.length > 1 ? t("display.more", { n: active.length - 1 }) : "");
  }

  function alertsShown() {
    return state.shows.alerts && params.get("alerts") !== "off";
  }

  function alertShown(a) {
    return state.shows.advantage || a.kind !== ADVANTAGE_ALERT;
  }

  var toastTimer = null;
  function toast(alert) {
    if (!alertsShown() || !alertShown(alert)) return;
    var t = $("toast");
    t.textContent = humanKind(alert.kind) + (alert.message ? " \u2014 " + alert.message : "");
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { t.hidden = true; }, TOAST_MS);
  }

  function renderStatus() {
    var box = $("unavailable");
    var msg = null;
    var title = t("display.closed");
    if (state.fatal) {
      title = t("display.not_configured");
      msg = state.fatal;
    } else if (state.schemaWarning) {
      title = t("display.update");
      msg = state.schemaWarning;
    } else if (state.status && state.status.state !== "online") {
      msg = t("display.daemon_state", { state: state.status.state || "offline" });
    }
    box.hidden = msg === null;
    setText("unavailable-title", title);
    setText("unavailable-text", msg || "");
  }

  function renderSources() {
    var e = $("source");
    var shoe = (state.sources || {}).shoe;
    var link = shoe && shoe.link ? shoe.link : "unknown";
    if (shoe && shoe.shoe && shoe.shoe !== "inserted") link = "down";
    e.dataset.link = link;
    e.title = "card source: " + (shoe ? JSON.stringify(shoe) : "unknown");
  }

  function setConn(st) {
    state.conn = st;
    var e = $("conn");
    e.dataset.state = st;
    setText("conn-text", t("conn." + st));
    document.body.classList.toggle("stale", st !== "connected");
  }

  // ------------------------------------------------------------------ messages

  var handlers = {
    "status": function (p) { state.status = p; renderStatus(); },
    "coup/current": function (p) { state.coup = p; renderCoup(); },
    "coup/card": function (p) { applyCard(p); renderCoup(); },
    "coup/result": function (p) { addResult(p); renderCoup(); },
    "history": function (p) { (p.coups || []).forEach(addResult); renderCoup(); },
    "shoe": function (p) { state.shoe = p; renderShoe(); },
    "roads": function (p) { state.roads = p; renderRoads(); },
    "stats": function (p) { state.stats = p; renderStats(); },
    "odds": function (p) { if (state.shows.odds) { state.odds = p; renderOdds(); } },
    "sources": function (p) { state.sources = p.sources || {}; renderSources(); },
    "alerts/active": function (p) { state.alerts = (p.alerts || []).filter(alertShown); renderAlerts(); },
    "alerts/event": function (p) {
      var a = p.alert || {};
      if (!alertShown(a)) return;
      if (p.action === "raised" && a.severity === "info") toast(a);
      if (p.action === "cleared") {
        state.alerts = state.alerts.filter(function (x) { return x.id !== a.id; });
      } else if (p.action === "raised" && a.severity !== "info" &&
                 !state.alerts.some(function (x) { return x.id === a.id; })) {
        state.alerts = state.alerts.concat([a]);
      }
      renderAlerts();
    },
  };

  var decoder = new TextDecoder("utf-8");

  function onMessage(topic, payload) {
    var prefix = state.prefix;
    if (topic.indexOf(prefix + "/") !== 0) return;
    var suffix = topic.slice(prefix.length + 1);
    var handler = handlers[suffix];
    if (!handler || !payload || payload.length === 0) return;
    var text = typeof payload === "string" ? payload : decoder.decode(payload);
    var key = suffix + "|" + text.length + "|" + fnv1a(text);
    if (suffix !== "status" && seenBefore(key)) return;
    var p;
    try { p = JSON.parse(text); } catch (err) { return; }
    if (!p || typeof p !== "object") return;
    if (p.schema !== SCHEMA) {
      state.schemaWarning = t("display.schema", { theirs: p.schema, ours: SCHEMA });
      renderStatus();
      return;
    }
    try {
      handler(p);
    } catch (err) {
      if (window.console) console.error("scoreboard: " + suffix, err);
    }
  }

  // ------------------------------------------------------------------ start

  function connect() {
    var cfg = state.config;
    var url = params.get("broker") || (cfg.broker && cfg.broker.url);
    if (!url) {
      state.fatal = t("display.no_broker");
      setConn("offline");
      renderStatus();
      return;
    }
    var opts = {
      protocolVersion: 4,
      clean: true,
      clientId: "display-" + (cfg.table_id || "table") + "-" + Math.random().toString(16).slice(2, 10),
      keepalive: 15,
      reconnectPeriod: 1000,
      connectTimeout: 5000,
      resubscribe: false,        // subscribed again on every connect, below
    };
    if (params.get("username")) {
      opts.username = params.get("username");
      opts.password = params.get("password") || "";
    }
    client = window.mqtt.connect(url, opts);
    client.on("connect", function () {
      setConn("connected");
      client.subscribe(state.prefix + "/#", { qos: 1 });
    });
    client.on("reconnect", function () { setConn("reconnecting"); });
    client.on("close", function () { if (state.conn === "connected") setConn("reconnecting"); });
    client.on("offline", function () { setConn("reconnecting"); });
    client.on("error", function (err) { if (window.console) console.warn("scoreboard: mqtt", err && err.message); });
    client.on("message", onMessage);
    window.scoreboard.client = client;
  }

  function start(cfg) {
    cfg = cfg || {};
    if (params.get("table")) cfg.table_id = params.get("table");
    if (params.get("prefix")) cfg.prefix = params.get("prefix");
    if (!cfg.prefix && cfg.table_id) cfg.prefix = "baccarat/" + cfg.table_id;
    state.config = cfg;
    window.shoeCommon.translate();
    document.querySelectorAll("[data-i18n-road]").forEach(function (road) {
      road.dataset.name = t("display.road." + road.dataset.i18nRoad);
      road.dataset.short = t("display.road." + road.dataset.i18nRoad + "_short");
    });
    var profile = params.get("profile") || cfg.profile || "dealer";
    state.profile = PROFILES[profile] ? profile : "player";   // an unknown profile shows the least
    state.shows = PROFILES[state.profile];
    applyProfile();
    state.prefix = (cfg.prefix || "").replace(/\/+$/, "");
    setText("table-id", (cfg.table_id || "\u2013").toUpperCase());
    document.title = "Punto Banco \u00b7 " + (cfg.table_id || "");
    renderLimits();
    renderOdds();
    renderCoup();
    renderRoads();
    renderAlerts();
    if (!state.prefix) {
      state.fatal = t("display.no_table");
      setConn("offline");
      renderStatus();
      return;
    }
    connect();
  }

  window.scoreboard = { state: state, client: null };

  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(renderRoads, 50);
  });

  // The shipped fonts first (common.js): nothing is laid out in a host font.
  var fonts = window.shoeCommon ? window.shoeCommon.fontsReady() : Promise.resolve();
  var config = fetch("config.json", { cache: "no-store" })
    .then(function (r) { return r.ok ? r.json() : {}; })
    .catch(function () { return {}; });
  Promise.all([config, fonts]).then(function (both) {
    var cfg = both[0];
    return window.shoeCommon.loadLang(window.shoeCommon.chooseLang(cfg.lang)).then(function () { start(cfg); });
  });
})();
