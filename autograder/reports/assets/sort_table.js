// class.html: a click on a header of a sortable table sorts its rows by that column, numbers by
// the cell's data-v, text in Korean order; a second click reverses the order.
document.querySelectorAll("table.sortable th").forEach(function (th, i) {
  th.addEventListener("click", function () {
    var body = th.closest("table").tBodies[0], rows = Array.from(body.rows), up = th.dataset.up !== "1";
    th.dataset.up = up ? "1" : "0";
    rows.sort(function (a, b) {
      var x = a.cells[i].dataset.v, y = b.cells[i].dataset.v;
      var c = x !== undefined && y !== undefined ? x - y : a.cells[i].textContent.localeCompare(b.cells[i].textContent, "ko");
      return up ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
