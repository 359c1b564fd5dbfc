/* What the display and the console share: the shipped fonts, loaded before anything is measured.
 *
 * fonts.css declares the faces with unicode-range, so a browser only fetches a subset when text
 * needs it; a page that draws Cyrillic a minute later would re-flow then. fontsReady() asks for
 * every subset at once (Latin, its extensions, Cyrillic, the symbols) and marks
 * <html data-fonts="ready"> when they are in (or "failed": the page still works, in whatever the
 * browser has). Tests wait for that mark before they measure anything.
 */
(function () {
  "use strict";

  var SAMPLE = "Aa09 \u00c4\u00e4\u00d6\u00f6\u00c5\u00e5 \u0160\u0161\u017d\u017e \u0416\u0436\u042a\u044a\u0429\u0449 \u2660\u2665\u2666\u2663\u25b8\u2713";

  function fontsReady() {
    var root = document.documentElement;
    if (!document.fonts || !document.fonts.load) {
      root.dataset.fonts = "ready";
      return Promise.resolve();
    }
    return Promise.all([
      document.fonts.load("400 16px Inter", SAMPLE),
      document.fonts.load("400 16px 'Noto Sans Symbols 2'", SAMPLE),
    ]).then(function (loaded) {
      var ok = loaded[0].length > 0 && loaded[1].length > 0;
      root.dataset.fonts = ok ? "ready" : "failed";
    }, function () {
      root.dataset.fonts = "failed";
    });
  }

  // ------------------------------------------------------------------ languages
  //
  // One catalogue per language, i18n/<lang>.json: {"key": "text with {name} placeholders"}.
  // Card codes, numbers and amounts are the same in every language and never go through here.

  var LANGS = ["en", "ru", "bg", "fi"];
  var catalogue = {};
  var fallback = {};

  function chooseLang(configured) {
    var asked = new URLSearchParams(window.location.search).get("lang");
    var lang = (asked || configured || "en").toLowerCase();
    return LANGS.indexOf(lang) >= 0 ? lang : "en";
  }

  function fetchCatalogue(lang) {
    return fetch("i18n/" + lang + ".json", { cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : {}; })
      .catch(function () { return {}; });
  }

  function loadLang(lang) {
    var loads = [fetchCatalogue(lang)];
    if (lang !== "en") loads.push(fetchCatalogue("en"));
    return Promise.all(loads).then(function (cats) {
      catalogue = cats[0] || {};
      fallback = cats[1] || catalogue;
      document.documentElement.lang = lang;
      document.documentElement.dataset.lang = lang;
      return lang;
    });
  }

  // t("console.void", {coup: "1-4"}): the text of a key in the page's language (English if a
  // catalogue lacks it, the key itself if both do: a missing string shows, it never breaks the page).
  function t(key, vars) {
    var text = catalogue[key];
    if (text === undefined) text = fallback[key];
    if (text === undefined) text = key;
    if (vars) {
      text = text.replace(/\{(\w+)\}/g, function (m, name) {
        return vars[name] === undefined || vars[name] === null ? m : String(vars[name]);
      });
    }
    return text;
  }

  // Elements with data-i18n="key" get their text; data-i18n-title, data-i18n-placeholder too.
  function translate(root) {
    (root || document).querySelectorAll("[data-i18n]").forEach(function (e) { e.textContent = t(e.dataset.i18n); });
    (root || document).querySelectorAll("[data-i18n-title]").forEach(function (e) { e.title = t(e.dataset.i18nTitle); });
    (root || document).querySelectorAll("[data-i18n-placeholder]").forEach(function (e) {
      e.placeholder = t(e.dataset.i18nPlaceholder);
    });
  }

  window.shoeCommon = { fontsReady: fontsReady, LANGS: LANGS, chooseLang: chooseLang, loadLang: loadLang, t: t,
                        translate: translate };
})();
