// The report's toolbar: unfold and fold everything, filter the cases (name, outcome,
// significant Δ, unstable runs) and order the overview. Everything it filters is on the page
// already, drawn by the server: without this script the page shows all of it. It only reads
// data attributes and sets text, never markup.
(function () {
  "use strict";
  var bar = document.getElementById("toolbar");
  if (!bar) return;

  function all(selector) {
    return Array.prototype.slice.call(document.querySelectorAll(selector));
  }

  function element(tag, attributes, text) {
    var el = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      el.setAttribute(name, attributes[name]);
    });
    if (text) el.textContent = text;
    return el;
  }

  function labelled(text, control) {
    var label = element("label");
    label.appendChild(control);
    label.appendChild(document.createTextNode(text));
    return label;
  }

  function choice(name, options) {
    var select = element("select", { "aria-label": name });
    options.forEach(function (o) {
      select.appendChild(element("option", { value: o[0] }, o[1]));
    });
    return select;
  }

  [["Expand all", true], ["Collapse all", false]].forEach(function (b) {
    var button = element("button", { type: "button" }, b[0]);
    button.addEventListener("click", function () {
      all("details").forEach(function (d) { d.open = b[1]; });
    });
    bar.appendChild(button);
  });

  // Open the folds that hold a link's target (an overview row links to its case).
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    for (var node = target; node; node = node.parentElement) {
      if (node.localName === "details") node.open = true;
    }
  }
  window.addEventListener("hashchange", reveal);
  reveal();

  var rows = all("table.overview tr.case-row");
  if (!rows.length) return;
  var body = rows[0].parentNode;
  var noMatch = body.querySelector("tr.no-match");
  var sections = {};
  all("details.case[data-case]").forEach(function (s) {
    sections[s.getAttribute("data-case")] = s;
  });
  var twoArm = document.querySelector("table.overview .delta-row") !== null;

  var search = element("input", {
    type: "search", placeholder: "Filter by case name", "aria-label": "Filter by case name",
  });
  var outcome = choice("Outcome", [["all", "All cases"], ["failing", "Below threshold"],
                                   ["passing", "Passing"]]);
  var significant = element("input", { type: "checkbox", name: "significant" });
  var unstable = element("input", { type: "checkbox", name: "unstable" });
  var orders = [["suite", "Suite order"]];
  if (twoArm) orders.push(["delta-desc", "Δ, highest first"], ["delta-asc", "Δ, lowest first"]);
  orders.push(["score-asc", "Score, lowest first"]);
  var order = choice("Order", orders);
  var count = element("span", { class: "count", "aria-live": "polite" });

  bar.appendChild(search);
  bar.appendChild(outcome);
  if (twoArm) bar.appendChild(labelled("Significant Δ only", significant));
  bar.appendChild(labelled("Unstable only", unstable));
  bar.appendChild(order);
  bar.appendChild(count);

  function matches(row) {
    var query = search.value.trim().toLowerCase();
    var passed = row.getAttribute("data-passed");
    if (query && row.getAttribute("data-name").toLowerCase().indexOf(query) < 0) return false;
    if (outcome.value === "failing" && passed !== "0") return false;
    if (outcome.value === "passing" && passed !== "1") return false;
    if (significant.checked && !row.getAttribute("data-sig")) return false;
    if (unstable.checked && !row.getAttribute("data-unstable")) return false;
    return true;
  }

  function filter() {
    var shown = 0;
    rows.forEach(function (row) {
      var ok = matches(row);
      row.hidden = !ok;
      var section = sections[row.getAttribute("data-case")];
      if (section) section.hidden = !ok;
      if (ok) row.classList.toggle("alt", shown++ % 2 === 1);
    });
    noMatch.hidden = shown > 0;
    count.textContent = shown === rows.length
      ? rows.length + (rows.length === 1 ? " case" : " cases")
      : shown + " of " + rows.length + " cases";
  }

  function number(row, key) {
    var value = parseFloat(row.getAttribute(key === "score-asc" ? "data-score" : "data-delta"));
    return isNaN(value) ? null : value;
  }

  function sort() {
    var key = order.value;
    var index = function (row) { return parseInt(row.getAttribute("data-case"), 10); };
    var sorted = rows.slice().sort(function (a, b) {
      if (key === "suite") return index(a) - index(b);
      var x = number(a, key), y = number(b, key);
      if (x === null || y === null) return (x === null) - (y === null) || index(a) - index(b);
      return (key === "delta-desc" ? y - x : x - y) || index(a) - index(b);
    });
    sorted.forEach(function (row) { body.insertBefore(row, noMatch); });
    rows = sorted;
    filter();
  }

  search.addEventListener("input", filter);
  [outcome, significant, unstable].forEach(function (c) { c.addEventListener("change", filter); });
  order.addEventListener("change", sort);
  filter();
})();
