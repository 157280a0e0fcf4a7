// Real data (issue 22, item 5): public data sets from statsmodels, each fitted by the defaults and compared with the
// float64 references written by tests/fixtures/make_gallery.py (its own numpy criteria, cross-checked there against
// statsmodels' cv_loo); and the offset tests of item 1: shifting x or y by a constant must not change the answers.
//
// Cases that fail on today's engine are marked `todo` (they run and report, but do not fail the suite) with what must
// change; the engineers fixing issue 22 remove each mark as their change makes the case pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { init } from '../../web/src/index.js';
import { initOptions } from './build.mjs';

const ka = await init(initOptions);
const dir = new URL('../fixtures/gallery/', import.meta.url);
const sets = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(new URL(f, dir), 'utf8')));
const ESTIMATOR = { nw: 'nadaraya-watson', ll: 'local-linear' };
const range = (a) => Math.max(...a) - Math.min(...a);

// ---------------------------------------------------------------------------------------------------------------
// Which cases fail today (measured on branch centre, with every input centred in double before the float32 pass),
// and why. Each is marked `todo` with what must change; remove an entry when the change lands and the case passes.

const GALLERY_TODAY = {
  'co2 ll cv':
    'item 2: the minimum is not defined to 1 % in h. Below h = 0.0213 (a quarter of the monthly spacing) held-out ' +
    'points at the gaps of the series are extrapolated from designs with slope pivot ratios of 1e-16 to 1e-10 and the ' +
    'float64 CV jumps between 0.2119 and 35 from one h to the next 0.6 % away (the engine now scores those +inf, its ' +
    "rule 'engine' in make_gallery.py); above, it dips to 0.21333592 at h = 0.0220 (the rule's minimiser) from a " +
    'plateau at 0.2133380 (h = 0.023 to 0.026). The engine, whose criterion at n = 521 runs in float32 (double only ' +
    'up to 500 points), picks h = 0.02333 with CV 0.2133381 (on the plateau: 1e-5 of the value from the minimum, ' +
    '6 % off in h; it picked 0.02152 when this was first written). ' +
    'What would change it: the criterion in double with x and h in double (not their float32 copies) for this size',
};

// What float64 itself can hold: y + c is rounded to a step of 2^(⌊log2|y + c|⌋ − 52) on the way in and the result on
// the way out, so a prediction of shifted data can move by that step even when the arithmetic is exact. At c = 1.7e12
// the step is 2⁻¹² (2.4e-4), above 1e-5 of El Niño's range(y) (1.03e-4): there the bound is one step, not 1e-5.
const float64Step = (v) => 2 ** (Math.floor(Math.log2(Math.abs(v))) - 52);

/** The largest change a prediction may show, relative to range(y): 1e-5, or one float64 step of y + c if larger. */
function offsetBound(data, axis, off) {
  if (axis !== 'y') return 1e-5;
  const top = off + Math.max(...data.y.map(Math.abs));
  return Math.max(1e-5, float64Step(top) / range(data.y));
}

// ---------------------------------------------------------------------------------------------------------------
// The gallery: selected bandwidths and fits against the float64 references.

/**
 * Whether a selection matches the reference of its criterion. Where the rules for (nearly) singular local-linear
 * designs lead to different minimisers (`ruleDependent`; see make_gallery.py), matching any of them is accepted. A
 * minimiser on a plateau down to the bottom of the scan (every point fitted from its nearest neighbours) is not
 * unique: there the selection must reach the plateau's value instead (1e-4 relative).
 */
function matches(selection, ref) {
  const rules = ref.ruleDependent ? Object.entries(ref.rules) : [['textbook', ref.rules.textbook]];
  const tried = [];
  for (const [rule, r] of rules) {
    if (r.atLowerEnd) {
      const ok = Math.abs(selection.score - r.value) <= 1e-4 * Math.abs(r.value);
      tried.push(`${rule}: plateau value ${r.value} below h = ${r.bandwidth.map((v) => v.toPrecision(5))}`);
      if (ok) return { ok, tried };
    } else {
      const worst = Math.max(...r.bandwidth.map((v, d) => Math.abs(selection.bandwidth[d] / v - 1)));
      tried.push(
        `${rule}: h = ${r.bandwidth.map((v) => v.toPrecision(6))} (value ${r.value.toPrecision(8)}), off by ${worst.toPrecision(3)}`,
      );
      if (worst <= 0.01) return { ok: true, tried };
    }
  }
  return { ok: false, tried };
}

for (const ds of sets) {
  const { x, y, dim, grid } = ds;
  const scale = range(y);
  for (const est of ['nw', 'll']) {
    for (const which of ['cv', 'aicc']) {
      const ref = ds.reference[est][which];
      const name = `gallery ${ds.name} (n = ${ds.n}, ${dim}-D), ${est} ${which}: selectBandwidth within 1 % of the float64 minimiser`;
      const why = GALLERY_TODAY[`${ds.name} ${est} ${which}`];
      test(name, { todo: why && `issue 22 ${why}` }, () => {
        const sel = ka.selectBandwidth(x, y, { dim, estimator: ESTIMATOR[est], rule: which });
        const { ok, tried } = matches(sel, ref);
        assert.ok(
          ok,
          `selected h = ${Array.from(sel.bandwidth, (v) => v.toPrecision(6))} (score ${sel.score}); float64 ${tried.join('; ')}`,
        );
      });
      const fitName = `gallery ${ds.name}, ${est} ${which}: kernelRegression at the float64 minimiser fits within 1e-4 of range(y)`;
      test(fitName, () => {
        const model = ka.kernelRegression(x, y, {
          dim,
          estimator: ESTIMATOR[est],
          bandwidth: ref.bandwidth,
          method: 'exact',
        });
        try {
          let compared = 0;
          for (const [where, q] of [
            ['Data', x],
            ['Grid', grid],
          ]) {
            const got = model.predict(q);
            const want = ref[`fitAt${where}`];
            const regular = ref[`regularAt${where}`];
            for (let i = 0; i < want.length; i++) {
              // The guard for nearly singular designs acts elsewhere and is documented to differ (docs/regression.md).
              if (!regular[i]) continue;
              compared++;
              const err = Math.abs(got[i] - want[i]) / scale;
              assert.ok(
                err <= 1e-4,
                `${where.toLowerCase()} point ${i}: ${got[i]} against ${want[i]} (${err.toExponential(2)} of range(y))`,
              );
            }
          }
          assert.ok(compared >= ds.n, `only ${compared} regular points compared`);
        } finally {
          model.dispose();
        }
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Offsets: adding c to x (and the queries) or to y must change predictions by at most 1e-5 of range(y) and
// bandwidths by at most 1e-3 relative. The data are the Nile and El Niño sets moved near the origin and given a
// deterministic fractional part on multiples of 2^-12, so that x + c and y + c are exact in float64 for every c here
// (float64's step at 1.7e12 is 2^-12) while float32 cannot hold them (its step at 1e3 is 2^-14, at 1e4 2^-10): any
// change is the engine's. The reference is the engine's own answer on the unshifted data.

const OFFSETS = [1e3, 1e4, 1.7e9, 1.7e12];
const nile = sets.find((s) => s.name === 'nile');
const elnino = sets.find((s) => s.name === 'elnino');
/** A fraction in [0, 1) on multiples of 2^-12, from the golden-ratio sequence. */
const jitter = (i, step = 0.6180339887) => Math.floor(((i * step) % 1) * 4096) / 4096;
const oneD = {
  dim: 1,
  x: nile.x.map((v, i) => v - 1920 + jitter(i)), // years −49 … 50, jittered
  y: nile.y.map((v, i) => v + jitter(i, 0.4142135624)),
  queries: Array.from({ length: 101 }, (_, i) => -49.75 + i),
};
const twoD = {
  dim: 2,
  x: elnino.x.map((v, i) => (i % 2 === 0 ? v - 1980 : v) + jitter(i) / 2), // (year − 1980, month), jittered
  y: elnino.y.map((v) => Math.round(v * 4096) / 4096),
  queries: Array.from({ length: 30 }, (_, i) => [-28.5 + 2 * i, 1.5 + (i % 11)]).flat(),
};
const shifted = (a, c) => a.map((v) => v + c);

/** Max |a − b − c| over range(y): predictions from shifted values, shifted back in double. */
function predictionChange(base, moved, c, scale) {
  let worst = 0;
  for (let i = 0; i < base.length; i++) worst = Math.max(worst, Math.abs(moved[i] - c - base[i]));
  return worst / scale;
}

function offsetCases() {
  const cases = [];
  const fits = [
    ['nw', 'exact'],
    ['nw', 'grid'],
    ['nw', 'sparse'],
    ['ll', 'exact'],
    ['ll', 'grid'],
  ];
  for (const data of [oneD, twoD]) {
    const h = data.dim === 1 ? 2.5 : [4, 0.9];
    for (const [est, method] of fits) {
      cases.push({
        what: `${data.dim}-D kernelRegression ${est} ${method} predictions`,
        data,
        kind: 'predict',
        run: (x, y, q) => {
          const model = ka.kernelRegression(x, y, { dim: data.dim, estimator: ESTIMATOR[est], bandwidth: h, method });
          try {
            return model.predict(q);
          } finally {
            model.dispose();
          }
        },
      });
    }
  }
  const selections = [
    ['nw', 'cv', 'exact'],
    ['nw', 'aicc', 'exact'],
    ['ll', 'cv', 'exact'],
    ['ll', 'aicc', 'exact'],
    ['nw', 'cv', 'grid'],
    ['ll', 'cv', 'grid'],
  ];
  for (const [est, rule, method] of selections) {
    cases.push({
      what: `1-D selectBandwidth ${est} ${rule} ${method} bandwidth`,
      data: oneD,
      kind: 'bandwidth',
      run: (x, y) => ka.selectBandwidth(x, y, { dim: 1, estimator: ESTIMATOR[est], rule, method }).bandwidth,
    });
  }
  cases.push({
    what: '2-D selectBandwidth ll cv exact bandwidth',
    data: twoD,
    kind: 'bandwidth',
    run: (x, y) => ka.selectBandwidth(x, y, { dim: 2, estimator: 'local-linear' }).bandwidth,
  });
  const attention = [
    ['gaussian', 'exact'],
    ['gaussian', 'sparse'],
    ['gaussian', 'top-k'],
    ['gaussian', 'random-features'],
    ['gaussian', 'nystrom'],
    ['laplacian', 'exact'],
    ['laplacian', 'sparse'],
    ['cauchy', 'exact'],
    ['epanechnikov', 'exact'],
    ['epanechnikov', 'sparse'],
    ['tricube', 'exact'],
    ['uniform', 'exact'],
  ];
  for (const [kernel, method] of attention) {
    cases.push({
      what: `1-D attention ${kernel} ${method} output`,
      data: oneD,
      kind: 'predict',
      run: (x, y, q) =>
        ka.attention(q, x, y, {
          dim: 1,
          kernel,
          bandwidth: 2.5,
          method,
          empty: 'zero',
          ...(method === 'top-k' ? { topK: 8 } : {}),
        }),
    });
  }
  return cases;
}

for (const c of offsetCases()) {
  const { data } = c;
  let base;
  const baseline = () => (base ??= c.run(data.x, data.y, data.queries));
  for (const axis of ['x', 'y']) {
    for (const off of OFFSETS) {
      const name = `offset ${axis} + ${off}: ${c.what} ${c.kind === 'predict' ? 'move by ≤ 1e-5 of range(y)' : 'move by ≤ 1e-3 relative'}`;
      test(name, () => {
        const x = axis === 'x' ? shifted(data.x, off) : data.x;
        const y = axis === 'y' ? shifted(data.y, off) : data.y;
        const q = axis === 'x' ? shifted(data.queries, off) : data.queries;
        const got = c.run(x, y, q);
        const want = baseline();
        if (c.kind === 'predict') {
          const change = predictionChange(want, got, axis === 'y' ? off : 0, range(data.y));
          const bound = offsetBound(data, axis, off);
          assert.ok(
            change <= bound,
            `changed by ${change.toExponential(3)} of range(y), above ${bound.toExponential(3)}`,
          );
        } else {
          const change = Math.max(...Array.from(want, (v, d) => Math.abs(got[d] / v - 1)));
          assert.ok(
            change <= 1e-3,
            `h ${Array.from(got)} against ${Array.from(want)}: ${change.toExponential(3)} relative`,
          );
        }
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The R np case of item 1 (tests/fixtures/make_np_case.py): local-linear, least-squares CV, two inputs, y around 37,
// residual sd about 1; R np's npregbw bandwidths as statsmodels' KernelReg test records them, which are also the
// float64 textbook minimiser (the generator checks it).

const npCase = JSON.parse(readFileSync(new URL('../fixtures/np_ll_cvls.json', import.meta.url), 'utf8'));
test(`R np case (${npCase.source.split(':')[0]}): local-linear CV bandwidths per input within 0.5 % of R's, y as given and + 1.7e9`, () => {
  for (const offset of [0, 1.7e9]) {
    const y = npCase.y.map((v) => v + offset); // + 1.7e9: centred in double before the float32 pass
    const sel = ka.selectBandwidth(npCase.x, y, { dim: 2, estimator: 'local-linear', perDimension: true });
    const off = Array.from(sel.bandwidth, (v, d) => Math.abs(v / npCase.rBandwidth[d] - 1));
    assert.ok(
      Math.max(...off) <= 5e-3,
      `y + ${offset}: h = ${Array.from(sel.bandwidth)} against R's ${npCase.rBandwidth}: off by ${off.map((v) => v.toExponential(2))}`,
    );
  }
});
