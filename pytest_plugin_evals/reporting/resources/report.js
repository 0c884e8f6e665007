(function () {
  var bar = document.getElementById("toolbar");
  if (!bar) return;
  function all(open) {
    var ds = document.querySelectorAll("details");
    for (var i = 0; i < ds.length; i++) ds[i].open = open;
  }
  [["Expand all", true], ["Collapse all", false]].forEach(function (b) {
    var el = document.createElement("button");
    el.type = "button";
    el.textContent = b[0];
    el.addEventListener("click", function () { all(b[1]); });
    bar.appendChild(el);
  });
})();
