// Injected into a copy of report.html by tests/cli/t_report_browser.sh (the page itself has no
// script): reads what the browser laid out — the labels of the plots with their boxes, and the
// tables' cells as rendered text — and writes it as JSON into a pre element (id gt-result) for
// --dump-dom.
(function () {
  function inside(el) { // the label's box lies within its SVG's drawing area
    var svg = el.ownerSVGElement, b = el.getBBox(), vb = svg.viewBox.baseVal;
    return b.width > 0 && b.height > 0 && b.x >= vb.x - 0.5 && b.y >= vb.y - 0.5 &&
      b.x + b.width <= vb.x + vb.width + 0.5 && b.y + b.height <= vb.y + vb.height + 0.5;
  }
  function after(id) { // the elements of a section: from its <h2> to the next one
    var out = [], h = document.getElementById(id);
    for (var n = h && h.nextElementSibling; n && n.tagName !== "H2"; n = n.nextElementSibling) out.push(n);
    return out;
  }
  function all(id, sel) {
    var r = [];
    after(id).forEach(function (n) {
      if (n.matches(sel)) r.push(n);
      n.querySelectorAll(sel).forEach(function (x) { r.push(x); });
    });
    return r;
  }
  function table(id) {
    return all(id, "tr").filter(function (tr) { return tr.querySelector("td"); }).map(function (tr) {
      return Array.prototype.map.call(tr.querySelectorAll("td"), function (td) {
        var c = td.querySelector("code");
        return {text: td.innerText.trim(), title: c ? c.getAttribute("title") : null};
      });
    });
  }
  var res = {peak: [], p90: [], iterations: [], membw: table("membw"), top: table("topkernels")};
  all("membw", "text.peak").forEach(function (t) {
    res.peak.push({text: t.textContent, series: t.getAttribute("data-series"), inside: inside(t)});
  });
  all("launches", "text.bv").forEach(function (t) {
    var title = t.previousElementSibling && t.previousElementSibling.querySelector("title");
    res.p90.push({text: t.textContent, of: title ? title.textContent : null, inside: inside(t)});
  });
  var isvg = all("iterations", "svg")[0];
  if (isvg)
    isvg.querySelectorAll("text.xt").forEach(function (t) { res.iterations.push({text: t.textContent, inside: inside(t)}); });
  var pre = document.createElement("pre");
  pre.id = "gt-result";
  pre.textContent = JSON.stringify(res);
  document.body.appendChild(pre);
})();
