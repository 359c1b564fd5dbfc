"""Checks any page of ours must pass, whatever it shows: its own fonts, no clipped text, its layout.

    rendered_fonts(page)  -> {family: glyphs}   every font Chromium drew the page's text with (CDP)
    clipped_text(page)    -> [problem, ...]     text wider than its box, or cut by a box that clips it
    layout(page)          -> {path: box}        every rendered element's box, to compare two browsers
    small_targets(page)   -> [problem, ...]     buttons smaller than 48 x 48 px

``rendered_fonts`` asks Chromium itself (``CSS.getPlatformFontsForNode``, what DevTools shows
as "Rendered Fonts") which fonts drew the text of every element: a glyph drawn with a host font
names that font, whatever CSS says.
"""

from __future__ import annotations

SHIPPED_FAMILIES = {"Inter", "Noto Sans Symbols 2"}
TARGET_MIN = 48          # px, the smallest touch target (both sides)

_SKIP_TAGS = {"SCRIPT", "STYLE", "TITLE", "HEAD", "NOSCRIPT", "TEMPLATE"}


def rendered_fonts(page) -> dict[str, dict]:
    """{family: {"glyphs": n, "custom": bool, "where": [a few element ids/classes]}} for the page's text."""
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": -1})["root"]
        found: dict[str, dict] = {}

        def visit(node) -> None:
            if node.get("nodeType") == 1 and node.get("nodeName") not in _SKIP_TAGS:
                texts = [c for c in node.get("children", []) if c.get("nodeType") == 3 and c.get("nodeValue", "").strip()]
                if texts:
                    try:
                        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]
                    except Exception as exc:  # a live page replaced the node since the snapshot
                        if "Could not find node" not in str(exc):
                            raise
                        fonts = []
                    attrs = node.get("attributes", [])
                    label = dict(zip(attrs[::2], attrs[1::2], strict=True))
                    where = node["nodeName"].lower() + ("#" + label["id"] if "id" in label else "") + \
                        ("." + label["class"].split()[0] if label.get("class") else "")
                    for f in fonts:
                        entry = found.setdefault(f["familyName"], {"glyphs": 0, "custom": f["isCustomFont"],
                                                                   "where": []})
                        entry["glyphs"] += f["glyphCount"]
                        entry["custom"] = entry["custom"] and f["isCustomFont"]
                        if len(entry["where"]) < 8 and where not in entry["where"]:
                            entry["where"].append(where)
            for child in node.get("children", []):
                visit(child)

        visit(root)
        return found
    finally:
        cdp.detach()


def assert_own_fonts(page) -> dict[str, dict]:
    """Every glyph on the page was drawn with a font the page ships (fonts.css), none with a host font."""
    fonts = rendered_fonts(page)
    assert fonts, "no text rendered at all"
    strangers = {k: v for k, v in fonts.items() if k not in SHIPPED_FAMILIES or not v["custom"]}
    assert not strangers, f"text drawn with fonts the page does not ship: {strangers}"
    assert fonts["Inter"]["glyphs"] > 0
    return fonts


CLIPPED_JS = """
scrolling => {
  const out = [];
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let n;
  while ((n = walker.nextNode())) {
    const text = n.textContent.trim();
    if (!text) continue;
    const el = n.parentElement;
    if (!el || !el.getClientRects().length) continue;            // not rendered (hidden)
    if (getComputedStyle(el).visibility === 'hidden') continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const t = range.getBoundingClientRect();
    if (!t.width && !t.height) continue;
    const own = getComputedStyle(el);
    // the element's own box: text wider than the box it sits in (display other than inline)
    if (own.display !== 'inline' && el.scrollWidth > el.clientWidth + 1) {
      out.push(describe(el) + ' "' + text + '": scroll width ' + el.scrollWidth + ' > box ' + el.clientWidth);
      continue;
    }
    // every ancestor that clips must hold the whole text (scrolled-away road cells may be wholly outside)
    const mayScroll = scrolling && el.closest(scrolling);
    for (let a = el; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      // a box that scrolls (auto, scroll) shows its text by scrolling: only hidden/clip cut it
      const cutsX = s.overflowX === 'hidden' || s.overflowX === 'clip';
      const cutsY = s.overflowY === 'hidden' || s.overflowY === 'clip';
      if (!cutsX && !cutsY) continue;
      const b = a.getBoundingClientRect();
      const outside = t.right <= b.left || t.left >= b.right || t.bottom <= b.top || t.top >= b.bottom;
      if (outside && mayScroll) break;
      if ((cutsX && (t.left < b.left - 1 || t.right > b.right + 1)) || (cutsY && (t.top < b.top - 1 || t.bottom > b.bottom + 1))) {
        out.push(describe(el) + ' "' + text + '": text ' + [t.left, t.top, t.right, t.bottom].map(Math.round) +
                 ' cut by ' + describe(a) + ' ' + [b.left, b.top, b.right, b.bottom].map(Math.round));
        break;
      }
    }
  }
  // nothing scrolls sideways: not the document, not a box that scrolls
  if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    out.push('the page is ' + document.documentElement.scrollWidth + ' px wide in a ' + window.innerWidth + ' px window');
  }
  document.querySelectorAll('body *').forEach(el => {
    const s = getComputedStyle(el);
    if ((s.overflowX === 'auto' || s.overflowX === 'scroll') && el.getClientRects().length &&
        el.scrollWidth > el.clientWidth + 1) {
      out.push(describe(el) + ': scrolls sideways (' + el.scrollWidth + ' > ' + el.clientWidth + ')');
    }
  });
  return out;
}
"""


def clipped_text(page, scrolling: str | None = ".grid") -> list[str]:
    """Text that does not fit: wider than its own box, or cut by an ancestor that clips.

    ``scrolling``: a selector of boxes that scroll by design (the roads' grids keep their newest
    columns in view): text wholly outside them is scrolled away, not clipped.
    """
    return page.evaluate(CLIPPED_JS, scrolling)


LAYOUT_JS = """
() => {
  const out = {};
  const path = (el) => {
    const parts = [];
    for (let e = el; e && e !== document.documentElement; e = e.parentElement) {
      let i = 0;
      for (let s = e.previousElementSibling; s; s = s.previousElementSibling) i++;
      parts.unshift(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ':' + i);
    }
    return parts.join('>');
  };
  document.querySelectorAll('body *').forEach(el => {
    if (!el.getClientRects().length) return;
    const r = el.getBoundingClientRect();
    out[path(el)] = [r.left, r.top, r.width, r.height].map(v => Math.round(v * 100) / 100);
  });
  return out;
}
"""


def layout(page) -> dict[str, list[float]]:
    return page.evaluate(LAYOUT_JS)


def layout_differences(a: dict, b: dict, tolerance: float = 0.5) -> list[str]:
    out = []
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            out.append(f"{key}: only in {'the first' if key in a else 'the second'}")
        elif any(abs(x - y) > tolerance for x, y in zip(a[key], b[key], strict=True)):
            out.append(f"{key}: {a[key]} != {b[key]}")
    return out


SMALL_TARGETS_JS = """
min => Array.from(document.querySelectorAll('button, [role=button], input, select, a[href]'))
  .filter(e => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden')
  .map(e => { const r = e.getBoundingClientRect();
              return {what: e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' "' + (e.textContent || e.value || '').trim().slice(0, 30) + '"',
                      w: r.width, h: r.height}; })
  .filter(t => t.w < min - 0.5 || t.h < min - 0.5)
  .map(t => t.what + ' ' + Math.round(t.w) + 'x' + Math.round(t.h))
"""


def small_targets(page, minimum: int = TARGET_MIN) -> list[str]:
    return page.evaluate(SMALL_TARGETS_JS, minimum)
