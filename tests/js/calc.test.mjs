// The browser's formulas (_static/kb-calc/formulas.js) against the shared cases of
// tests/calc_cases.yaml (JSON, which is YAML too), with the tolerance pytest uses
// for tools/kb/calc/formulas.py.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { CALCULATORS, fit, formatNumber, parseInput, relationProblems } from "../../_static/kb-calc/formulas.js";

const root = new URL("../../", import.meta.url);
const CASES = JSON.parse(readFileSync(new URL("tests/calc_cases.yaml", root), "utf8"));
const SPECS = JSON.parse(readFileSync(new URL("tools/kb/calc/specs.json", root), "utf8"));
const TOL = CASES.tolerance;

const close = (got, want) =>
  want === null || got === null ? got === want : Math.abs(got - want) <= Math.max(TOL * Math.max(Math.abs(got), Math.abs(want)), TOL);

const defaults = (name) => Object.fromEntries(SPECS[name].inputs.map((i) => [i.name, i.default]));

for (const c of CASES.compute) {
  test(`compute: ${c.case}`, () => {
    const got = CALCULATORS[c.calculator]({ ...defaults(c.calculator), ...c.inputs });
    for (const [key, want] of Object.entries(c.expect)) {
      assert.ok(close(got[key], want), `${key}: got ${got[key]}, want ${want} (${c.why})`);
    }
  });
}

for (const [value, unit, shown] of CASES.format) {
  test(`format: ${value} ${unit}`, () => assert.equal(formatNumber(value, unit), shown));
}

for (const [min, max, integer, raw, value, message] of CASES.parse) {
  test(`parse: ${JSON.stringify(raw)}`, () => assert.deepEqual(parseInput({ min, max, integer }, raw), [value, message]));
}

for (const [memory, chips, total, verdict] of CASES.fit) {
  test(`fit: ${total} GB on ${memory} GB / ${chips}`, () => assert.equal(fit(memory, chips, total), verdict));
}

test("the curves start at the one-off cost and at zero", () => {
  const r = CALCULATORS["rent-vs-buy"](defaults("rent-vs-buy"));
  assert.equal(r.own_curve.length, 37);
  assert.equal(r.own_curve[0], 80000); // the article's card price (note-rental-long-term)
  assert.equal(r.rent_curve[0], 0);
  assert.equal(r.rent_curve[36], r.rent_36);
});

for (const [name, changed, refused] of CASES.relations) {
  test(`relations: ${name} ${JSON.stringify(changed)}`, () => {
    const spec = SPECS[name];
    const defaults = Object.fromEntries(spec.inputs.map((i) => [i.name, i.default]));
    assert.deepEqual(relationProblems(spec, { ...defaults, ...changed }), refused);
  });
}
