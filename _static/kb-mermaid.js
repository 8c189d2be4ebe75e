// Draws the page's mermaid diagrams (<pre class="mermaid">, written by
// kb_mermaid_local). Loaded as a module only by pages with a diagram, in place
// of sphinxcontrib-mermaid's inline script, so that the Content-Security-Policy
// needs no 'unsafe-inline' for it. The settings come from conf.py through the
// data-kb-mermaid attribute of this script's own tag.
//
// Like sphinxcontrib-mermaid's script: the light or dark mermaid theme follows
// furo's, a diagram hidden when the page loads (in a closed <details>) is
// drawn when it is shown, and with mermaid_fullscreen each diagram gets a
// button that shows it in a full-window dialog.

import mermaid from "./vendor/mermaid/mermaid.esm.min.mjs";

const settings = JSON.parse(
  document.querySelector("script[data-kb-mermaid]")?.dataset.kbMermaid || "{}",
);

const isDark = () => {
  const chosen = document.body.dataset.theme; // furo: "light", "dark" or "auto"
  if (chosen === "dark" || chosen === "light") return chosen === "dark";
  return window.matchMedia("(prefers-color-scheme: dark)").matches;
};

// mermaid's dark theme writes edge labels #ccc on #585858 (contrast 4.4,
// under WCAG AA's 4.5): a darker label background gives 7.
const DARK_VARIABLES = { edgeLabelBackground: "#3b3b3b" };

const initialize = (dark) =>
  mermaid.initialize({
    ...settings.init,
    startOnLoad: false,
    darkMode: dark,
    theme: dark ? settings.darkTheme : settings.lightTheme,
    themeVariables: { ...settings.init?.themeVariables, ...(dark ? DARK_VARIABLES : {}) },
  });

const diagrams = () => [...document.querySelectorAll("pre.mermaid")];
const isShown = (el) => el.getClientRects().length > 0;

// mermaid.run() must not run twice at once: every drawing waits its turn.
let queue = Promise.resolve();
const draw = (elements) => {
  queue = queue.then(async () => {
    try {
      await mermaid.run({ nodes: elements });
    } catch (error) {
      console.error("kb-mermaid: a diagram could not be drawn", error);
    }
    elements.forEach(sizeSvg);
  });
  return queue;
};

const sizeSvg = (el) => {
  const svg = el.querySelector("svg");
  if (!svg) return;
  if (settings.height) svg.style.height = settings.height;
  svg.style.width = "100%";
};

// Diagrams inside something closed are drawn once they are shown: mermaid
// measures text, which a hidden element does not have.
let watcher = null;
const drawWhenShown = (elements) => {
  watcher?.disconnect();
  watcher = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      watcher.unobserve(entry.target);
      draw([entry.target]);
    }
  });
  elements.forEach((el) => watcher.observe(el));
};

const drawAll = () => {
  const all = diagrams();
  all.forEach((el) => {
    el.dataset.kbSource ??= el.textContent;
    if (el.dataset.processed) {
      // drawn before, in the other theme: back to its text
      el.removeAttribute("data-processed");
      el.textContent = el.dataset.kbSource;
    }
    if (settings.width) el.style.width = settings.width;
  });
  drawWhenShown(all.filter((el) => !isShown(el)));
  return draw(all.filter(isShown));
};

// -- fullscreen -----------------------------------------------------------------

// The button's icon is drawn, not a character: "⛶" (sphinxcontrib-mermaid's
// default) is missing from most system fonts and showed as an empty box.
const SVG = "http://www.w3.org/2000/svg";
const expandIcon = () => {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "18");
  svg.setAttribute("height", "18");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "kb-mermaid-icon");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", "M4 9V4h5M15 4h5v5M20 15v5h-5M9 20H4v-5");
  path.setAttribute("fill", "none");
  path.setAttribute("stroke", "currentColor");
  path.setAttribute("stroke-width", "2");
  path.setAttribute("stroke-linecap", "round");
  path.setAttribute("stroke-linejoin", "round");
  svg.append(path);
  return svg;
};

let dialog = null;

const fullscreenDialog = () => {
  if (dialog) return dialog;
  dialog = document.createElement("dialog");
  dialog.className = "kb-mermaid-dialog";
  dialog.setAttribute("aria-label", "全屏查看图示");
  const close = document.createElement("button");
  close.type = "button";
  close.className = "kb-mermaid-close";
  close.setAttribute("aria-label", "关闭");
  close.textContent = "✕";
  close.addEventListener("click", () => dialog.close());
  dialog.append(close, document.createElement("div"));
  // a click on the backdrop (the dialog itself, outside its content) closes it
  dialog.addEventListener("click", (event) => event.target === dialog && dialog.close());
  document.body.append(dialog);
  return dialog;
};

const showFullscreen = (el) => {
  const box = fullscreenDialog();
  const svg = el.querySelector("svg")?.cloneNode(true);
  if (!svg) return;
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  // the whole diagram, as large as the dialog allows
  svg.style.width = "100%";
  svg.style.height = "100%";
  svg.style.maxWidth = "100%";
  box.lastElementChild.replaceChildren(svg);
  box.showModal();
};

const addFullscreenButtons = () => {
  for (const el of diagrams()) {
    if (el.parentElement.classList.contains("kb-mermaid-container")) continue;
    const container = document.createElement("div");
    container.className = "kb-mermaid-container";
    el.before(container);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "kb-mermaid-fullscreen";
    button.setAttribute("aria-label", "全屏查看图示");
    // "⛶", the default setting, is drawn as an icon; another text is shown as is
    if (settings.button && settings.button !== "⛶") button.textContent = settings.button;
    else button.append(expandIcon());
    button.style.opacity = settings.buttonOpacity || "50%";
    button.addEventListener("click", () => showFullscreen(el));
    container.append(el, button);
  }
};

// -- start ----------------------------------------------------------------------

let dark = isDark();
initialize(dark);

const redrawIfThemeChanged = () => {
  if (isDark() === dark) return;
  dark = !dark;
  initialize(dark);
  drawAll();
};

const start = async () => {
  if (settings.fullscreen) addFullscreenButtons();
  await drawAll();
  new MutationObserver(redrawIfThemeChanged).observe(document.body, {
    attributes: true,
    attributeFilter: ["data-theme"],
  });
  window.matchMedia("(prefers-color-scheme: dark)")
    .addEventListener("change", redrawIfThemeChanged);
};

// a module runs after the document is parsed: the diagrams are all there
start();
