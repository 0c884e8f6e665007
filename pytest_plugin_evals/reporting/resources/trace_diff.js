// The trace diff's pickers: a select of runs for each arm, and the pair they name swapped in
// from its inert <template> (drawn by the server, every value text). Without this script the
// page shows the typical pair. It only reads data attributes, moves nodes and sets text.
(function () {
  "use strict";
  function runs(section, side) {
    return (section.getAttribute("data-" + side + "-runs") || "").split(" ").filter(Boolean);
  }

  function picker(section, side, current) {
    var select = document.createElement("select");
    select.setAttribute("aria-label", section.getAttribute("data-" + side + "-title") + " run");
    runs(section, side).forEach(function (n) {
      var option = document.createElement("option");
      option.value = n;
      option.textContent = "run " + n;
      select.appendChild(option);
    });
    select.value = current;
    var label = document.createElement("label");
    label.textContent = section.getAttribute("data-" + side + "-title") + ": ";
    label.appendChild(select);
    return { label: label, select: select };
  }

  Array.prototype.forEach.call(document.querySelectorAll("section.trace-diff"), function (section) {
    var place = section.querySelector(".diff-picker");
    var shown = section.querySelector(".diff-shown");
    var typical = shown && shown.querySelector(".diff-pair");
    if (!place || !typical) return;
    var pairs = {};
    pairs[typical.getAttribute("data-pair")] = typical;
    Array.prototype.forEach.call(section.querySelectorAll("template[data-pair]"), function (t) {
      pairs[t.getAttribute("data-pair")] = t;
    });
    var at = section.getAttribute("data-pair").split("-");
    var left = picker(section, "left", at[0]);
    var right = picker(section, "right", at[1]);
    place.appendChild(document.createTextNode("Compare: "));
    place.appendChild(left.label);
    place.appendChild(right.label);

    function show() {
      var found = pairs[left.select.value + "-" + right.select.value];
      while (shown.firstChild) shown.removeChild(shown.firstChild);
      if (!found) {
        var note = document.createElement("p");
        note.className = "muted";
        note.textContent = "This pair is not in the report: with many runs it keeps only the "
          + "pairs that share a run with the most typical pair.";
        shown.appendChild(note);
      } else if (found.localName === "template") {
        shown.appendChild(document.importNode(found.content, true));
      } else {
        shown.appendChild(found);
      }
    }
    left.select.addEventListener("change", show);
    right.select.addEventListener("change", show);
  });
})();
