// The reader's colour theme before the page is painted (furo's inline script,
// as a file so that the Content-Security-Policy needs no 'unsafe-inline').
document.body.dataset.theme = localStorage.getItem("theme") || "auto";

// Phones: the contents drawer (furo's #__toc checkbox) closes once an entry
// is tapped, so the reader sees the section they chose.
document.addEventListener("click", (event) => {
  const toc = document.getElementById("__toc");
  if (toc?.checked && event.target.closest(".toc-drawer a")) toc.checked = false;
});

// A code block or table that scrolls sideways (an ASCII diagram, a long
// line, a wide table) takes keyboard focus, so it can be scrolled without a
// mouse (WCAG 2.1.1).
const focusScrollable = () => {
  for (const box of document.querySelectorAll("article pre:not(.mermaid), article .table-wrapper")) {
    if (box.scrollWidth > box.clientWidth) box.tabIndex = 0;
    else box.removeAttribute("tabindex");
  }
};
document.addEventListener("DOMContentLoaded", focusScrollable);
window.addEventListener("resize", focusScrollable);
