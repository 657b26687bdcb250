// The admin page's behaviour beyond plain HTML forms: selecting rows,
// confirming destructive actions, and showing a payload on request.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const rows = () => Array.from(document.querySelectorAll("input.row-select"));
  const selectAll = document.getElementById("select-all");
  const count = document.getElementById("selected-count");

  function updateSelection() {
    const n = rows().filter((b) => b.checked).length;
    if (count) count.textContent = n + " selected";
    document.querySelectorAll("button.needs-selection").forEach((b) => { b.disabled = n === 0; });
    if (selectAll) {
      selectAll.checked = n > 0 && n === rows().length;
      selectAll.indeterminate = n > 0 && n < rows().length;
    }
  }
  if (selectAll) {
    selectAll.addEventListener("change", () => {
      rows().forEach((b) => { b.checked = selectAll.checked; });
      updateSelection();
    });
  }
  rows().forEach((b) => b.addEventListener("change", updateSelection));
  updateSelection();

  document.querySelectorAll("button[data-confirm]").forEach((b) => {
    b.addEventListener("click", (ev) => {
      if (!window.confirm(b.dataset.confirm)) ev.preventDefault();
    });
  });

  const dialog = document.getElementById("payload-dialog");
  const meta = document.getElementById("payload-meta");
  const body = document.getElementById("payload-body");
  document.querySelectorAll("a.payload-link").forEach((a) => {
    a.addEventListener("click", async (ev) => {
      if (!dialog || typeof dialog.showModal !== "function") return;
      ev.preventDefault();
      meta.textContent = "Loading…";
      body.textContent = "";
      dialog.showModal();
      try {
        const res = await fetch(a.href, { credentials: "same-origin", headers: { Accept: "application/json" } });
        const doc = await res.json();
        if (!res.ok) {
          meta.textContent = doc.error || ("HTTP " + res.status);
          return;
        }
        meta.textContent = doc.id + " · " + doc.message_type + " · " + doc.content_type + " · " + doc.size + " bytes" +
          (doc.cut ? " · the first " + doc.shown + " shown" : "") +
          (doc.encoding === "base64" ? " · base64" : "");
        let text = doc.payload;
        if (doc.encoding === "utf-8" && !doc.cut && /json/.test(doc.content_type)) {
          try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* shown as sent */ }
        }
        body.textContent = text;
      } catch (e) {
        meta.textContent = "The payload cannot be loaded: " + e;
      }
    });
  });
});
