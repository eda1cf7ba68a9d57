// nqkit browse: small progressive enhancements (the pages work without them).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // Filters apply as soon as they change.
  const form = document.getElementById("filters");
  if (form) {
    const send = () => {
      // Leave unset filters out of the URL, so links stay short and readable.
      form.querySelectorAll("select, input").forEach((el) => {
        if (!el.value || (el.type === "checkbox" && !el.checked)) el.disabled = true;
      });
      form.submit();
    };
    form.addEventListener("submit", (e) => { e.preventDefault(); send(); });
    form.querySelectorAll("select, input[type=checkbox]").forEach((el) =>
      el.addEventListener("change", send));
  }
  // Candidate tree: show only the candidates an annotator or the prediction chose.
  const only = document.getElementById("only-chosen");
  const tree = document.getElementById("tree");
  if (only && tree) {
    only.addEventListener("change", () => tree.classList.toggle("only", only.checked));
  }
  // Keys: "/" focuses the search box; "j"/"k" (or arrows) go to the next/previous example.
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
    if (e.key === "/") { e.preventDefault(); document.getElementById("search")?.focus(); return; }
    const go = (id) => { const a = document.getElementById(id); if (a) window.location = a.href; };
    if (e.key === "j" || e.key === "ArrowRight") go("next");
    if (e.key === "k" || e.key === "ArrowLeft") go("prev");
  });
});
