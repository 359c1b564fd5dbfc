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

  window.shoeCommon = { fontsReady: fontsReady };
})();
