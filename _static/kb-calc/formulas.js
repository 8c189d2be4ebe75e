// The calculators' formulas in the browser: a port of tools/kb/calc/formulas.py
// (its docstring cites the sources: the ZeRO paper for model states, Korthikanti
// et al. 2022 for activations). tests/calc_cases.yaml is checked against both,
// with one tolerance (pytest and node --test), so the two cannot drift apart.
// Pure functions, no DOM: calc.js draws the page.

export const GB = 1e9;
export const HORIZON_MONTHS = 36;

export const depreciationPerSecond = (priceCny, years, days, hours) => priceCny / (years * days * hours * 3600);
export const electricityPerSecond = (watts, kwhPrice) => (watts / 1000) * kwhPrice / 3600;

export function breakEvenMonths(purchase, upkeepPerYear, rentPerHour, hoursPerMonth, resale = 0) {
  const saving = rentPerHour * hoursPerMonth - upkeepPerYear / 12;
  if (saving <= 0) return null;
  return Math.max(purchase - resale, 0) / saving;
}

export const weightsGb = (paramsBillion, bytesPerParam) => (paramsBillion * 1e9 * bytesPerParam) / GB;
export const kvCacheGb = (layers, kvHeads, headDim, context, batch, bytesPerValue) =>
  (2 * layers * kvHeads * headDim * context * batch * bytesPerValue) / GB;

// FP32: the 16-bit values double, the dropout masks (2sbh + as²b of 1 byte) do not
export function activationsGb(seq, microBatch, hidden, layers, heads, recompute, fp32 = false) {
  const sbh = seq * microBatch * hidden;
  const perLayer = recompute
    ? (fp32 ? 4 : 2) * sbh
    : sbh * (fp32 ? 66 + (9 * heads * seq) / hidden : 34 + (5 * heads * seq) / hidden);
  return (perLayer * layers) / GB;
}

export function inferenceCost(v) {
  const depreciation = depreciationPerSecond(v.gpu_price * v.usd_cny, v.years, v.days, v.hours) * v.gpus;
  const electricity = electricityPerSecond(v.watts, v.kwh_price) * v.gpus;
  const ops = (depreciation * v.ops_share) / 100;
  const perSecond = depreciation + electricity + ops;
  const perRequest = perSecond / v.qps;
  return {
    depreciation,
    electricity,
    ops,
    per_second: perSecond,
    per_request: perRequest,
    per_million_tokens: (perRequest / v.tokens) * 1e6,
  };
}

export function rentVsBuy(v) {
  const rentMonth = v.rent * v.hours;
  const ownMonth = v.upkeep / 12;
  const net = Math.max(v.purchase - v.resale, 0); // 0, not -5.6e-17, when they are equal
  const months = [...Array(HORIZON_MONTHS + 1).keys()];
  const even = breakEvenMonths(v.purchase, v.upkeep, v.rent, v.hours, v.resale);
  return {
    rent_per_month: rentMonth,
    own_per_month: ownMonth,
    break_even_months: even,
    break_even_years: even === null ? null : even / 12,
    own_36: net + ownMonth * HORIZON_MONTHS,
    rent_36: rentMonth * HORIZON_MONTHS,
    own_curve: months.map((m) => net + ownMonth * m),
    rent_curve: months.map((m) => rentMonth * m),
  };
}

// bytes per parameter: [weights, gradients, optimizer states K]
const MODEL_STATE_BYTES = {
  "mixed adam": [2, 2, 12],
  "mixed sgd-momentum": [2, 2, 8],
  "fp32 adam": [4, 4, 8],
  "fp32 sgd-momentum": [4, 4, 4],
};

export function trainingMemory(v) {
  const mixed = v.precision === "fp16-amp" || v.precision === "bf16-amp" ? "mixed" : "fp32";
  const [w, g, k] = MODEL_STATE_BYTES[`${mixed} ${v.optimizer}`];
  const stage = Number(v.zero);
  const n = v.gpus;
  const weights = weightsGb(v.params, w) / (stage >= 3 ? n : 1);
  const gradients = weightsGb(v.params, g) / (stage >= 2 ? n : 1);
  const optimizer = weightsGb(v.params, k) / (stage >= 1 ? n : 1);
  const activations = activationsGb(
    v.seq, v.micro_batch, v.hidden, v.layers, v.heads, v.checkpointing === "full", mixed === "fp32",
  );
  return { weights, gradients, optimizer, activations, total: weights + gradients + optimizer + activations };
}

const WEIGHT_BYTES = { fp16: 2, int8: 1, int4: 0.5 };
const KV_BYTES = { fp16: 2, int8: 1 };

export function inferenceMemory(v) {
  const weights = weightsGb(v.params, WEIGHT_BYTES[v.weight_precision]);
  const kv = kvCacheGb(v.layers, v.kv_heads, v.head_dim, v.context, v.batch, KV_BYTES[v.kv_precision]);
  return { weights, kv_cache: kv, total: weights + kv };
}

// formulas.py fit: one chip's memory (a card of several chips is as many devices)
export function fit(memoryGb, chips, totalGb) {
  if (memoryGb === null) return null;
  return totalGb <= memoryGb / chips ? "yes" : "no";
}

export const CALCULATORS = {
  "inference-cost": inferenceCost,
  "rent-vs-buy": rentVsBuy,
  "training-memory": trainingMemory,
  "inference-memory": inferenceMemory,
};

// -- inputs (formulas.py parse_input) ---------------------------------------------------

// What a refused input is told, by kind ("{limit}": the limit, formatted):
// formulas.py MESSAGES, the catalog's source strings. A page passes `say`
// with their translations (kb.calc.directive puts them in text.messages).
export const MESSAGES = {
  choose: "请从列表中选择",
  empty: "请填写数值",
  number: "请输入数字",
  integer: "请输入整数",
  min: "不能小于 {limit}",
  max: "不能大于 {limit}",
  range: "结果超出了能显示的范围：请检查输入的数值是否合理",
  tiny: "太小了：请输入 0 或不小于 {limit} 的数",
  divides: "要能整除{other}（{value}）",
  at_most: "不能大于{other}的 {value}",
};

export function wording(messages) {
  return (kind, values = {}) => messages[kind].replace(/\{(\w+)\}/g, (whole, name) => (name in values ? values[name] : whole));
}

export function parseInput(spec, raw, choices = null, say = wording(MESSAGES)) {
  if (spec.choices) {
    const keys = choices || Object.keys(spec.choices);
    const text = String(raw ?? "").trim();
    return keys.includes(text) ? [text, null] : [null, say("choose")];
  }
  // full-width digits, point and signs, as a Chinese input method types them (formulas.py FULL_WIDTH)
  const text = String(raw ?? "").trim().replace(/[０-９．＋－ｅＥ]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0)).replace(/[,，]/g, "");
  if (text === "") return [null, say("empty")];
  // Python's float(): decimal or exponent notation, nothing else ("0x10", "1e" refused)
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) return [null, say("number")];
  const value = Number(text);
  if (!Number.isFinite(value)) return [null, say("number")];
  if (spec.integer && !Number.isInteger(value)) return [null, say("integer")];
  if (value < spec.min) return [null, say("min", { limit: formatNumber(spec.min) })];
  if (value > spec.max) return [null, say("max", { limit: formatNumber(spec.max) })];
  if (value !== 0 && Math.abs(value) < SHOWN_MIN) return [null, say("tiny", { limit: formatNumber(SHOWN_MIN) })];
  return [value, null];
}

// The inputs that each pass alone but not together (formulas.py
// relation_problems), as specs.json names them on the input: the attention
// heads must divide the hidden size (divides), a resale value is no more than
// the price (at_most).
const RELATIONS = {
  divides: (mine, other) => other % mine !== 0,
  at_most: (mine, other) => mine > other,
};

export function relationProblems(spec, values, say = wording(MESSAGES)) {
  const labels = Object.fromEntries(spec.inputs.map((item) => [item.name, item.label]));
  const problems = {};
  for (const item of spec.inputs) {
    for (const [kind, refused] of Object.entries(RELATIONS)) {
      const other = item[kind];
      if (other && item.name in values && other in values && refused(values[item.name], values[other])) {
        problems[item.name] = say(kind, { other: labels[other], value: formatNumber(values[other]) });
      }
    }
  }
  return problems;
}

// -- numbers as readers read them (formulas.py format_number) ----------------------------

const MONEY = ["元", "美元"];
// the amounts that round to 1 万 (a whole 元) and to 1 亿 (four significant digits of 万)
const WAN_FROM = 9999.5;
const YI_FROM = 99995000;
const atLeastOne = (x) => (Math.abs(x) < 1 ? Math.sign(x) : x);

function fixed(value, decimals) {
  const n = Math.floor(Math.abs(value) * 10 ** decimals + 0.5);
  const digits = String(n).padStart(decimals + 1, "0");
  const cut = digits.length - decimals;
  const text = digits.slice(0, cut) + (decimals ? "." + digits.slice(cut) : "");
  return (value < 0 && n ? "-" : "") + text;
}

function significant(value, digits = 3) {
  const magnitude = Math.floor(Math.log10(Math.abs(value)));
  const text = fixed(value, Math.max(digits - 1 - magnitude, 0));
  return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
}

function grouped(value) {
  const text = fixed(value, 0);
  const sign = text.startsWith("-") ? "-" : "";
  return sign + text.slice(sign.length).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

// Results beyond these are not shown (formulas.py SHOWN_MIN, SHOWN_MAX).
const SHOWN_MIN = 1e-9;
const SHOWN_MAX = 1e15;

export function showable(value) {
  return Number.isFinite(value) && (value === 0 || (Math.abs(value) >= SHOWN_MIN && Math.abs(value) < SHOWN_MAX));
}

// The names of a result's numbers (or lists of numbers) that cannot be shown
// (formulas.py out_of_range).
export function outOfRange(result) {
  const numbers = (v) => (typeof v === "number" ? [v] : Array.isArray(v) ? v.flatMap(numbers) : []);
  return Object.keys(result).filter((name) => !numbers(result[name]).every(showable)).sort();
}

export function formatNumber(value, unit = "") {
  if (value === null || value === undefined || !showable(value)) return "—";
  const a = Math.abs(value);
  const money = MONEY.some((m) => unit.startsWith(m));
  let text;
  let suffix = "";
  if (a === 0) text = "0";
  else if (money && a >= YI_FROM) [text, suffix] = [significant(atLeastOne(value / 1e8), 4), " 亿"];
  else if (money && a >= WAN_FROM) [text, suffix] = [significant(atLeastOne(value / 1e4), 4), " 万"];
  else if (a >= 100) text = grouped(value);
  else text = significant(value);
  if (!unit) return text + suffix;
  return suffix ? `${text}${suffix}${unit}` : `${text} ${unit}`;
}
