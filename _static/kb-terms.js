// Term links ({term}`…`, kb.pages.glossary) show the term's definition on
// hover and on keyboard focus. The build writes the definition into the
// link's title; a title alone shows on hover only, after a delay, and never
// to keyboard users, so it becomes a tooltip here (role="tooltip", named by
// aria-describedby). Escape hides it. Loaded only by pages with term links.

const links = document.querySelectorAll("article a.reference[title] .std-term");
let shown = null;

const tip = document.createElement("span");
tip.id = "kb-term-tip";
tip.className = "kb-term-tip";
tip.setAttribute("role", "tooltip");
tip.hidden = true;
document.body.append(tip);

const hide = () => {
  tip.hidden = true;
  shown?.removeAttribute("aria-describedby");
  shown = null;
};

const show = (link) => {
  tip.textContent = link.dataset.kbDefinition;
  tip.hidden = false;
  link.setAttribute("aria-describedby", tip.id);
  shown = link;
  const box = link.getBoundingClientRect();
  const width = Math.min(360, document.documentElement.clientWidth - 16);
  tip.style.maxWidth = `${width}px`;
  const left = Math.max(8, Math.min(box.left, document.documentElement.clientWidth - width - 8));
  tip.style.left = `${left + window.scrollX}px`;
  const below = box.bottom + 6;
  const height = tip.offsetHeight;
  const top = below + height > window.innerHeight && box.top > height + 6 ? box.top - height - 6 : below;
  tip.style.top = `${top + window.scrollY}px`;
};

for (const span of links) {
  const link = span.closest("a");
  link.dataset.kbDefinition = link.title;
  link.removeAttribute("title"); // the tooltip replaces the browser's own
  link.addEventListener("mouseenter", () => show(link));
  link.addEventListener("focus", () => show(link));
  link.addEventListener("mouseleave", () => shown === link && document.activeElement !== link && hide());
  link.addEventListener("blur", () => shown === link && hide());
}
document.addEventListener("keydown", (event) => event.key === "Escape" && hide());
