// A category in the demo (issue 33 item 4): a text column picked as the category gives one curve per level over x,
// pooled by the λ that cross-validation chose with h, and the captions say λ. Data: R's ToothGrowth (len ~ dose +
// supp) and ChickWeight (weight ~ Time + Diet, Diet written as text), as tests/fixtures/make_category_files.R wrote
// them. Reference: the library's own selectBandwidth and kernelRegression with `types`, run here in Node on the rows
// of the file as this test reads them, labels as written (the library's mixed fits are checked against statsmodels
// and float64 loops in tests/js/mixed.test.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init } from '../../web/src/index.js';
import { assertClean, downloadText, launch, openDemo, TIMEOUT_MS, waitForFit } from './demo-page.mjs';

const FILES = fileURLToPath(new URL('../fixtures/files/', import.meta.url));
const TYPES = ['continuous', 'unordered'];

let session;
let ka;
before(async () => {
  session = await launch();
  ka = await init({ threads: 1 });
});
after(async () => {
  await session?.close();
});

/** The file's columns by name, read here: numbers as numbers, quoted cells as their text. */
function readCsv(file) {
  const [head, ...lines] = readFileSync(`${FILES}${file}`, 'utf8').trim().split('\n');
  const cell = (c) => (c.startsWith('"') ? c.slice(1, -1) : Number(c));
  const names = head.split(',').map(cell);
  const rows = lines.map((l) => l.split(',').map(cell));
  return Object.fromEntries(names.map((name, c) => [name, rows.map((r) => r[c])]));
}

const range = (a) => Math.max(...a) - Math.min(...a);

/**
 * Opens `file`, picks x, y and the category (by the menus' values: column indices), and returns what the page shows
 * once a fit with one curve per level is drawn.
 */
async function openWithCategory(page, problems, file, { x, y, category }, levels) {
  await page.setInputFiles('#file', `${FILES}${file}`);
  await page.waitForFunction(() => !document.getElementById('columns').hidden);
  // All three menus set before one change event: each alone would be a pair the page refuses (x = y, say).
  await page.evaluate(
    ([xc, yc, cc]) => {
      document.getElementById('x1').value = xc;
      document.getElementById('ycol').value = yc;
      document.getElementById('category').value = cc;
      document.getElementById('category').dispatchEvent(new Event('change'));
    },
    [String(x), String(y), String(category)],
  );
  await waitForFit(page, problems, 's.fit.curves?.length === a && s.selection?.lambda != null', levels);
  return page.evaluate(() => {
    const { fit, x, y, category, selection } = window.demoState;
    return {
      x: Array.from(x),
      y: Array.from(y),
      category: { name: category.name, labels: category.labels, codes: Array.from(category.codes) },
      h: fit.h,
      lambda: fit.lambda,
      estimator: fit.estimator,
      kernel: fit.kernel,
      level: fit.level,
      queries: Array.from(fit.queries),
      curves: fit.curves.map((c) => ({
        label: c.label,
        mean: Array.from(c.mean),
        lower: Array.from(c.lower),
        upper: Array.from(c.upper),
      })),
      selection: { bandwidth: selection.bandwidth, lambda: selection.lambda, score: selection.score },
      status: document.getElementById('fit-status').textContent,
      caption: document.getElementById('selection-caption').textContent,
      dataStatus: document.getElementById('data-status').textContent,
    };
  });
}

/**
 * The page's choice and curves against the library's: selectBandwidth on the file's rows (x and the label) and
 * kernelRegression at the page's (h, λ), predicted at the page's queries with each label.
 */
function checkAgainstLibrary(shown, xs, labels, ys) {
  const rows = xs.flatMap((v, i) => [v, labels[i]]);
  // The page's data: the file's rows in its order, each row's level the code of its label in sorted order.
  const sorted = [...new Set(labels)].sort();
  assert.deepEqual(shown.category.labels, sorted);
  assert.deepEqual(shown.x, xs);
  assert.deepEqual(shown.y, ys);
  assert.deepEqual(
    shown.category.codes,
    labels.map((l) => sorted.indexOf(l)),
  );
  // The choice: the same search on the same points (the page's in x order, so float32 sums in another order: the
  // search may stop a step apart, within its own tolerance of 1e-3 of the range it searches).
  const options = { dim: 2, types: TYPES, kernel: shown.kernel, estimator: shown.estimator };
  const chosen = ka.selectBandwidth(rows, ys, { ...options, rule: 'cv' });
  assert.ok(
    Math.abs(shown.selection.bandwidth[0] / chosen.bandwidth[0] - 1) < 1e-3,
    `h ${shown.h} vs ${chosen.bandwidth[0]}`,
  );
  assert.ok(
    Math.abs(shown.selection.lambda - chosen.bandwidth[1]) < 1e-3,
    `λ ${shown.lambda} vs ${chosen.bandwidth[1]}`,
  );
  assert.ok(
    Math.abs(shown.selection.score / chosen.score - 1) < 1e-6,
    `CV ${shown.selection.score} vs ${chosen.score}`,
  );
  // The fit shown is at the choice, and λ is in Aitchison–Aitken's range.
  assert.equal(shown.h[0], shown.selection.bandwidth[0]);
  assert.equal(shown.lambda, shown.selection.lambda);
  assert.ok(shown.lambda >= 0 && shown.lambda <= (sorted.length - 1) / sorted.length);
  // Each curve: the library's model at the page's (h, λ) at the page's queries with that label.
  const model = ka.kernelRegression(rows, ys, { ...options, bandwidth: [shown.h[0], shown.lambda] });
  try {
    const tolerance = 1e-6 * range(ys);
    shown.curves.forEach((curve, k) => {
      assert.equal(curve.label, sorted[k]);
      const at = shown.queries.flatMap((q) => [q, curve.label]);
      const ref = model.predictInterval(at, { level: shown.level });
      for (const part of ['mean', 'lower', 'upper']) {
        curve[part].forEach((v, i) =>
          assert.ok(
            Math.abs(v - ref[part][i]) <= tolerance,
            `${curve.label} ${part} at ${shown.queries[i]}: ${v} vs ${ref[part][i]}`,
          ),
        );
      }
    });
  } finally {
    model.dispose();
  }
  // The captions say λ, to the digits shown, with the category's name.
  const said = `λ = ${shown.lambda.toPrecision(3)} for “${shown.category.name}”`;
  assert.ok(shown.status.includes(said), shown.status);
  assert.ok(shown.caption.includes(said), shown.caption);
  assert.ok(shown.dataStatus.includes(`${sorted.length} levels (${sorted.join(', ')})`), shown.dataStatus);
}

test(
  'ToothGrowth: supp as the category, one curve per supplement over dose, h and λ as the library chooses',
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    const file = readCsv('toothgrowth.csv');
    // Columns: len 0, supp 1, dose 2.
    const shown = await openWithCategory(page, problems, 'toothgrowth.csv', { x: 2, y: 0, category: 1 }, 2);
    checkAgainstLibrary(shown, file.dose, file.supp, file.len);
    // The curves differ (orange juice and ascorbic acid do not act alike at low doses) but are pooled: λ > 0.
    assert.ok(shown.lambda > 0, `λ ${shown.lambda}`);
    // The fit's CSV has each level's curve, named by its label.
    const csv = await downloadText(page, '#save-fit');
    const lines = csv.text.trim().split('\n');
    assert.equal(lines[0].split(',').slice(0, 3).join(','), 'dose,supp,fit');
    assert.equal(lines.length, 1 + 2 * shown.queries.length);
    assert.deepEqual([...new Set(lines.slice(1).map((l) => l.split(',')[1]))], ['OJ', 'VC']);
    await assertClean(page, problems);
    await page.close();
  },
);

test(
  'ChickWeight: Diet (text) as the category over Time, four curves; the same column as x is refused by name',
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    const file = readCsv('chickweight.csv');
    // Columns: weight 0, Time 1, Diet 2.
    const shown = await openWithCategory(page, problems, 'chickweight.csv', { x: 1, y: 0, category: 2 }, 4);
    checkAgainstLibrary(shown, file.Time, file.Diet, file.weight);
    // The category cannot be y as well: the page says so, naming the column.
    await page.selectOption('#ycol', '2');
    await page.waitForFunction(() =>
      /cannot be the category and y/.test(document.getElementById('data-status').textContent),
    );
    assert.match(await page.locator('#data-status').textContent(), /“Diet” cannot be the category and y at once/);
    await assertClean(page, problems);
    await page.close();
  },
);
