// Calculators in the articles: turns each <div class="kb-calc" data-kb-calc="…">
// (written by kb.calc.directive, with its static table of the article's example)
// into a form. The formulas are in formulas.js (a port of kb.calc.formulas).
//
// - Inputs live in the URL's fragment (#inference-cost.qps=30&…), so a result can
//   be shared and reopened; a value in the URL is checked like a typed one.
// - A bad input gets a message beside it (aria-invalid, aria-describedby) and the
//   results say what to fix; inputs whose results cannot be shown (absurd ones)
//   are told so: never NaN or Infinity.
// - Labels, units and messages come from the page (the build's translations).

import { CALCULATORS, HORIZON_MONTHS, fit, formatNumber, outOfRange, parseInput, relationProblems, wording } from "./formulas.js";

const SVG = "http://www.w3.org/2000/svg";

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  node.append(...children);
  return node;
}

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

// -- the URL's fragment: one set of key=value pairs shared by every calculator ------

function readFragment() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}

function writeFragment(prefix, values, defaults) {
  const params = readFragment();
  // this calculator's keys are written anew; a section's anchor (#rental-long-term)
  // is not a key: the shared link opens at the calculator instead
  for (const key of [...params.keys()]) if (key.startsWith(`${prefix}.`) || !key.includes(".")) params.delete(key);
  for (const [k, v] of Object.entries(values)) {
    if (String(v) !== String(defaults[k])) params.set(`${prefix}.${k}`, v);
  }
  const hash = params.toString();
  history.replaceState(null, "", hash ? `#${hash}` : location.pathname + location.search);
  return location.href;
}

// -- one calculator --------------------------------------------------------------------

function chart(config, result) {
  const t = config.text;
  const [w, h, left, right, bottom, top] = [360, 200, 64, 28, 24, 8];
  const max = Math.max(...result.own_curve, ...result.rent_curve, 1);
  const x = (m) => left + ((w - left - right) * m) / HORIZON_MONTHS;
  const y = (v) => top + (h - top - bottom) * (1 - v / max);
  const line = (curve) => curve.map((v, m) => `${x(m).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const months = result.break_even_months;
  const summary = wording({ summary: t.chartSummary })("summary", {
    chart: t.chart,
    own: t.own,
    own_value: formatNumber(result.own_36, t.yuan),
    rent: t.rent,
    rent_value: formatNumber(result.rent_36, t.yuan),
    break_even: t.breakEven,
    months: months === null ? t.never : formatNumber(months, t.months),
  });
  const root = svg("svg", { viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": summary, class: "kb-calc-chart" });
  const title = svg("title");
  title.textContent = summary;
  root.append(title);
  root.append(svg("line", { x1: left, y1: y(0), x2: w - right, y2: y(0), class: "kb-calc-axis" }));
  root.append(svg("line", { x1: left, y1: top, x2: left, y2: y(0), class: "kb-calc-axis" }));
  for (const m of [0, 12, 24, 36]) {
    const label = svg("text", { x: x(m), y: h - 6, "text-anchor": "middle", class: "kb-calc-tick" });
    label.textContent = `${m} ${t.months}`;
    root.append(label);
  }
  const top_label = svg("text", { x: left - 4, y: top + 10, "text-anchor": "end", class: "kb-calc-tick" });
  top_label.textContent = formatNumber(max, t.yuan);
  root.append(top_label);
  root.append(svg("polyline", { points: line(result.own_curve), class: "kb-calc-own" }));
  root.append(svg("polyline", { points: line(result.rent_curve), class: "kb-calc-rent" }));
  if (months !== null && months <= HORIZON_MONTHS) {
    root.append(svg("line", { x1: x(months), y1: top, x2: x(months), y2: y(0), class: "kb-calc-even" }));
  }
  const legend = el(
    "p",
    { class: "kb-calc-legend", "aria-hidden": "true" },
    el("span", { class: "kb-calc-key kb-calc-own-key" }), ` ${t.own}  `,
    el("span", { class: "kb-calc-key kb-calc-rent-key" }), ` ${t.rent}`,
  );
  return el("figure", { class: "kb-calc-figure" }, root, legend);
}

// a table wider than the page scrolls sideways: then it takes keyboard focus
// (axe: scrollable-region-focusable), and only then
function focusableIfScrolling(node) {
  if (node.scrollWidth > node.clientWidth) node.tabIndex = 0;
  else node.removeAttribute("tabindex");
}
addEventListener("resize", () => document.querySelectorAll(".kb-calc-scroll").forEach(focusableIfScrolling));

function fitsList(config, total) {
  const t = config.text;
  const known = config.cards.filter((c) => c.memory_gb !== null);
  const ok = known.filter((c) => fit(c.memory_gb, c.chips, total) === "yes").map((c) => c.model);
  return ok.length ? ok.join("、") : t.fitsNone;
}

function mount(root, index) {
  const config = JSON.parse(root.dataset.kbCalc);
  const t = config.text;
  const prefix = index ? `${config.name}-${index + 1}` : config.name;
  const defaults = { ...config.values };
  const fragment = readFragment();
  const form = el("form", { class: "kb-calc-form", novalidate: true, "aria-label": config.title });
  const fields = {};
  for (const spec of config.inputs) {
    const id = `${prefix}-${spec.name}`;
    const errorId = `${id}-error`;
    const given = fragment.get(`${prefix}.${spec.name}`);
    const value = given ?? String(defaults[spec.name]);
    let control;
    if (spec.choices) {
      control = el("select", { id, name: spec.name, "aria-describedby": errorId });
      // a value in the URL that is not in the list is not replaced by
      // another: the field says so, as for a typed number
      if (!Object.hasOwn(spec.choices, value)) control.append(el("option", { value: "", selected: true }, "—"));
      for (const [key, label] of Object.entries(spec.choices)) {
        control.append(el("option", { value: key, selected: key === value }, label));
      }
    } else {
      control = el("input", {
        id, name: spec.name, type: "text", inputmode: "decimal", autocomplete: "off", value,
        "aria-describedby": errorId,
      });
    }
    const error = el("span", { id: errorId, class: "kb-calc-error" });
    const unit = spec.unit ? el("span", { class: "kb-calc-unit" }, spec.unit) : "";
    form.append(el("div", { class: "kb-calc-field" }, el("label", { for: id }, spec.label), control, unit, error));
    fields[spec.name] = { spec, control, error, given };
  }
  const status = el("p", { class: "kb-calc-status", role: "status" });
  const results = el("div", { class: "kb-calc-results", "aria-live": "polite" });
  const share = el("a", { class: "kb-calc-share", href: "#" }, t.share);
  const reset = el("button", { type: "button", class: "kb-calc-reset" }, t.reset);
  const tools = el("p", { class: "kb-calc-tools" }, share, " · ", reset);
  const live = el("div", { class: "kb-calc-live" }, form, status, results, tools);

  function update(write = true) {
    const values = {};
    let bad = 0;
    for (const [name, { spec, control, error }] of Object.entries(fields)) {
      const choices = spec.choices ? Object.keys(spec.choices) : null;
      const [value, message] = parseInput(spec, control.value, choices, wording(t.messages));
      error.textContent = message ?? "";
      if (message) {
        control.setAttribute("aria-invalid", "true");
        bad += 1;
      } else {
        control.removeAttribute("aria-invalid");
        values[name] = value;
      }
    }
    if (!bad) {
      // inputs that pass alone but not together (the heads must divide the hidden size)
      for (const [name, message] of Object.entries(relationProblems(config, values, wording(t.messages)))) {
        fields[name].error.textContent = message;
        fields[name].control.setAttribute("aria-invalid", "true");
        bad += 1;
      }
    }
    results.replaceChildren();
    if (bad) {
      status.textContent = t.fix;
      return;
    }
    status.textContent = "";
    const result = CALCULATORS[config.name](values);
    if (outOfRange(result).length) {
      status.textContent = t.messages.range;
      return;
    }
    const rows = config.outputs.map((o) =>
      el("tr", {}, el("th", { scope: "row" }, o.label), el("td", { class: "kb-calc-value" }, formatNumber(result[o.name], o.unit)), el("td", { class: "kb-calc-formula" }, o.formula)),
    );
    if (config.name === "rent-vs-buy") {
      const months = result.break_even_months;
      if (months === null) rows[2].children[1].textContent = t.never;
      rows.splice(3, 0, el("tr", {}, el("th", { scope: "row" }, t.breakEvenYears), el("td", { class: "kb-calc-value" }, months === null ? t.never : formatNumber(result.break_even_years, t.years)), el("td", { class: "kb-calc-formula" }, t.yearsFormula)));
    }
    if (config.name === "training-memory") {
      const card = config.cards.find((c) => c.id === values.card);
      const verdict = { null: t.unknown, yes: t.fitsYes, no: t.fitsNo }[fit(card.memory_gb, card.chips, result.total)];
      rows.push(el("tr", { class: "kb-calc-verdict" }, el("th", { scope: "row" }, fields.card.spec.choices[values.card]), el("td", { class: "kb-calc-value" }, verdict), el("td", { class: "kb-calc-formula" }, t.fitsFormula)));
    }
    if (config.name === "inference-memory") {
      rows.push(el("tr", { class: "kb-calc-verdict" }, el("th", { scope: "row" }, t.fitsOn), el("td", { class: "kb-calc-value" }, fitsList(config, result.total)), el("td", { class: "kb-calc-formula" }, `${t.fitsFormula}；${t.unknown}`)));
    }
    const table = el(
      "table", { class: "kb-calc-table" },
      el("caption", {}, t.results),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, t.item), el("th", { scope: "col" }, t.value), el("th", { scope: "col" }, t.formula))),
      el("tbody", {}, ...rows),
    );
    const scroll = el("div", { class: "kb-calc-scroll", role: "region", "aria-label": t.results }, table);
    results.append(scroll);
    focusableIfScrolling(scroll);
    if (config.name === "rent-vs-buy") results.append(chart(config, result));
    if (write) share.href = writeFragment(prefix, Object.fromEntries(Object.entries(fields).map(([n, f]) => [n, f.control.value.trim()])), defaults);
  }

  form.addEventListener("input", () => update());
  form.addEventListener("change", () => update());
  form.addEventListener("submit", (event) => event.preventDefault());
  reset.addEventListener("click", () => {
    for (const [name, { control }] of Object.entries(fields)) control.value = String(defaults[name]);
    update();
  });
  for (const table of root.querySelectorAll(".kb-calc-static")) table.hidden = true;
  root.querySelector(".kb-calc-title")?.replaceChildren(el("strong", {}, config.title));
  root.insertBefore(live, root.querySelector(".kb-calc-note"));
  root.classList.add("kb-calc-ready");
  update(false);
  share.href = location.href;
  // a shared link opens where its calculator is
  // (once the page has loaded: the browser's own scroll to the fragment, which
  // names no element, and images above would move it again)
  if (Object.values(fields).some((f) => f.given !== null)) {
    const show = () => requestAnimationFrame(() => root.scrollIntoView());
    if (document.readyState === "complete") show();
    else addEventListener("load", show, { once: true });
  }
}

// a second calculator of the same name on a page gets its own keys (name-2.…)
const seen = {};
for (const root of document.querySelectorAll(".kb-calc[data-kb-calc]")) {
  const name = JSON.parse(root.dataset.kbCalc).name;
  seen[name] = (seen[name] ?? -1) + 1;
  mount(root, seen[name]);
}
