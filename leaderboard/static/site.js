/* Kernel Gym leaderboard: column sorting and the filter box. Vanilla JS, no requests, works from file://. */
(function () {
  "use strict";

  function cellKey(row, index, type) {
    var cell = row.cells[index];
    if (!cell) { return null; }
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
    if (type === "number") {
      if (raw === "" || raw === "\u2013") { return null; }
      var value = parseFloat(raw);
      return isNaN(value) ? null : value;
    }
    return raw.toLowerCase();
  }

  function sortTable(table, index, type, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (row, position) { row.setAttribute("data-position", String(position)); });
    rows.sort(function (a, b) {
      var x = cellKey(a, index, type), y = cellKey(b, index, type);
      if (x === null && y === null) { return a.getAttribute("data-position") - b.getAttribute("data-position"); }
      if (x === null) { return 1; }   /* missing figures always sort last */
      if (y === null) { return -1; }
      var order = x < y ? -1 : (x > y ? 1 : 0);
      if (order === 0) { return a.getAttribute("data-position") - b.getAttribute("data-position"); }
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function setUpSorting(table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (head, index) {
      if (head.hasAttribute("data-nosort")) { return; }
      head.setAttribute("tabindex", "0");
      head.setAttribute("role", "columnheader");
      function activate() {
        var type = head.getAttribute("data-type") || "text";
        var current = head.getAttribute("aria-sort");
        /* Numbers sort high-to-low first (best first), text A-to-Z first. */
        var descending = current ? current === "ascending" : type === "number";
        Array.prototype.forEach.call(heads, function (other) { other.removeAttribute("aria-sort"); });
        head.setAttribute("aria-sort", descending ? "descending" : "ascending");
        sortTable(table, index, type, descending);
      }
      head.addEventListener("click", activate);
      head.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); activate(); }
      });
    });
  }

  function setUpFilter(input) {
    var counter = document.getElementById("filter-count");
    function apply() {
      var needle = input.value.trim().toLowerCase();
      var shown = 0, total = 0;
      document.querySelectorAll("table.filterable tbody tr").forEach(function (row) {
        var haystack = ((row.getAttribute("data-agent") || "") + " " + (row.getAttribute("data-model") || "")).toLowerCase();
        var visible = needle === "" || haystack.indexOf(needle) !== -1;
        row.hidden = !visible;
        total += 1;
        if (visible) { shown += 1; }
      });
      if (counter) { counter.textContent = needle === "" ? "" : shown + " of " + total + " rows"; }
    }
    input.addEventListener("input", apply);
    apply();
  }

  document.querySelectorAll("table.sortable").forEach(setUpSorting);
  var filter = document.getElementById("filter");
  if (filter) { setUpFilter(filter); }
}());
