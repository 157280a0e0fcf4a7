// Drawing: the main plot and the smaller views, redrawn in one animation frame after each change, each only when
// what it shows changed; the text panels; and the inspected (hovered or tapped) query.
import { describeFit, describeHover, describeIdentity, describeTimings } from './describe.js';
import { describeSelection } from './captions.js';
import { drawFit, drawSurface } from './plot-fit.js';
import { drawBars, drawMatrix, drawSelection, drawSlope } from './plot-views.js';
import { h1 } from './settings.js';
import { drawTimes, publish, state, subscribe, THIN } from './state.js';
import { $, ui } from './ui.js';
import { warningText } from './wording.js';
import { parser } from './workers.js';

let drawQueued = false;
/** Draws in the next animation frame (once, however many changes came before it). */
export function scheduleDraw() {
  if (drawQueued) return;
  drawQueued = true;
  requestAnimationFrame(() => {
    drawQueued = false;
    draw();
  });
}

/** The inspected query (hovered, tapped or picked by keys) or, with `orMiddle`, the middle one until then. */
function hovered(orMiddle = false) {
  const { fit } = state;
  if (!fit || !fit.matrix) return null;
  const hoverRow = state.hoverRow ?? (orMiddle ? Math.floor(fit.matrix.rows / 2) : null);
  if (hoverRow === null) return null;
  const { matrix } = fit;
  return {
    row: hoverRow,
    query: Array.from(matrix.queries.subarray(hoverRow * fit.dim, (hoverRow + 1) * fit.dim)),
    top: matrix.top[hoverRow],
  };
}

/** Draws plot `name` (plot, matrix, selection) on `target`: its canvas, or a stand-in for an export (no hover marks). */
export function paintPlot(name, target, cache, { hover: withHover = true } = {}) {
  const { data, fit, view } = state;
  if (name === 'matrix') return drawMatrix(target, fit?.matrix, withHover ? state.hoverRow : null);
  if (name === 'selection') return drawSelection(target, state.selection, h1(), data?.axes?.[0]);
  if (name === 'slope') return fit?.slope ? drawSlope(target, fit, view.xDomain, data.axes?.[0], data.names) : null;
  if (!data) return null;
  const hover = withHover ? hovered() : null;
  return data.dim === 1
    ? drawFit(target, {
        data,
        fit: fit && fit.dim === 1 ? fit : null,
        showBand: ui.band.checked && !fit?.lowess && Boolean(fit?.lower),
        hover,
        thin: THIN,
        ...view,
        cache,
      })
    : drawSurface(target, {
        data,
        fit: fit && fit.dim === 2 ? fit : null,
        hover,
        side: 48,
        thin: THIN,
        ...view,
        cache,
      });
}

/**
 * Paints the main plot's layer of many points in the parse worker (plot-fit.js asks, with the layer's `key`) and
 * redraws once it is back; an answer for a layer no longer wanted is dropped. If the worker cannot paint, the page
 * paints the layers itself from then on.
 */
function paintElsewhere(cache, key, version, spec) {
  parser('points', spec).then(
    ({ bitmap }) => {
      if (cache.asked !== key) {
        bitmap.close();
        return;
      }
      if (cache.canvas instanceof ImageBitmap) cache.canvas.close();
      Object.assign(cache, { key, version, canvas: bitmap });
      scheduleDraw();
    },
    () => {
      cache.paintElsewhere = null;
      cache.asked = null;
      scheduleDraw();
    },
  );
}

function draw() {
  const { data, fit } = state;
  if (!data) return;
  if (!('paintElsewhere' in state.layer)) state.layer.paintElsewhere = paintElsewhere;
  const t0 = performance.now();
  // Until a query is inspected, the bars show the middle one rather than an empty box.
  const shown = hovered(true);
  state.scales = paintPlot('plot', ui.plot, state.layer);
  // The smaller views are redrawn only when what they show changed (dragging changes only the fit and h).
  if (changed('matrix', fit?.matrix, state.hoverRow, ui.matrix.clientWidth)) {
    state.matrixArea = paintPlot('matrix', ui.matrix);
    drawBars(ui.bars, fit?.matrix, shown?.row ?? null, data.axes?.[0]);
  }
  if (changed('hover', fit, state.hoverRow, ui.band.checked))
    describeHover(
      ui,
      fit,
      shown,
      shown?.row ?? null,
      ui.band.checked && Boolean(fit?.lower),
      state.hoverRow !== null,
      data.axes,
    );
  if (changed('selection', state.selection, h1(), ui.selection.clientWidth)) {
    // A rule (Scott, Silverman) has no search curve: no empty box for it.
    const curve = Boolean(state.selection?.curve?.scores.length);
    ui.selection.hidden = !curve;
    for (const id of ['save-selection', 'save-selection-svg']) $(id).disabled = !curve;
    if (curve) paintPlot('selection', ui.selection);
    describeSelection();
  }
  if (fit && changed('warnings', fit, state.selection)) renderWarnings();
  ui.slope.hidden = !fit?.slope; // shown first, so that its size is known below
  ui.slopeSave.hidden = ui.slope.hidden;
  if (changed('slope', fit, ui.slope.clientWidth, state.view)) {
    ui.slopeStatus.textContent = fit?.slopeError ? `No derivative: ${fit.slopeError}` : '';
    paintPlot('slope', ui.slope);
  }
  if (fit && changed('text', fit)) {
    describeFit(ui, fit, THIN, data.axes);
    if (fit.view && changed('identity', fit.view)) describeIdentity(ui, fit, data.axes);
    describeTimings(ui, fit, state);
  }
  state.timings.draw = performance.now() - t0;
  drawTimes.push(state.timings.draw);
  if (drawTimes.length > 200) drawTimes.shift();
  publish();
}

const drawn = {};
/** True when any of `inputs` differs from the last call with this name (identity comparison). */
function changed(name, ...inputs) {
  const last = drawn[name];
  if (last && last.length === inputs.length && last.every((v, i) => v === inputs[i])) return false;
  drawn[name] = inputs;
  return true;
}

/**
 * The library's warnings on the fit and on the bandwidth choice (interpolating, precision, guard, sparse-points), listed
 * next to the fit; nothing when the results carry none (or no `warnings` field at all).
 */
export function renderWarnings() {
  // A LOWESS, loess or span fit uses no chosen h: the bandwidth choice's warnings are about the fit at h, not the
  // curve shown. The choice's warning of a kind the fit has too ('interpolating' on both, say) says the same thing
  // twice.
  const fitWarnings = state.fit?.warnings ?? [];
  const seen = new Set(fitWarnings.map((w) => w.code));
  const chosen =
    state.fit?.lowess || state.fit?.loess || state.fit?.spanBandwidth ? [] : (state.selection?.warnings ?? []);
  const items = [...fitWarnings, ...chosen.filter((w) => !seen.has(w.code))];
  ui.fitWarnings.replaceChildren(
    ...items.map((w) => {
      const li = document.createElement('li');
      li.textContent = warningText(w, state.data?.axes, state.data?.names);
      li.dataset.code = w.code;
      return li;
    }),
  );
  ui.fitWarnings.hidden = !items.length;
}

export function hoverAt(event) {
  const { fit, data } = state;
  if (!fit || !fit.matrix || !state.scales) return;
  const rect = ui.plot.getBoundingClientRect();
  const px = event.clientX - rect.left;
  const py = event.clientY - rect.top;
  const { matrix } = fit;
  let best = null;
  let bestD = Infinity;
  for (let r = 0; r < matrix.rows; r++) {
    const dx = state.scales.sx(matrix.queries[r * fit.dim]) - px;
    const dy = data.dim === 2 ? state.scales.sy(matrix.queries[r * 2 + 1]) - py : 0;
    if (dx * dx + dy * dy < bestD) {
      bestD = dx * dx + dy * dy;
      best = r;
    }
  }
  setHover(best);
}

export function setHover(row) {
  if (row === state.hoverRow) return;
  state.hoverRow = row;
  scheduleDraw();
}

/**
 * Keys on the plot or the attention matrix (both take the keyboard's focus) step the inspected query: an arrow to the
 * next or the previous one (from the middle query, which the bars show until one is inspected), Home and End to the
 * first and the last.
 */
export function hoverByKey(event) {
  const rows = state.fit?.matrix?.rows;
  if (!rows) return;
  const at = state.hoverRow ?? Math.floor(rows / 2);
  const next = { ArrowRight: at + 1, ArrowDown: at + 1, ArrowLeft: at - 1, ArrowUp: at - 1, Home: 0, End: rows - 1 }[
    event.key
  ];
  if (next === undefined) return;
  event.preventDefault();
  setHover(Math.max(0, Math.min(rows - 1, next)));
}

export function hoverMatrix(event) {
  const area = state.matrixArea;
  if (!area || !state.fit?.matrix) return;
  const rect = ui.matrix.getBoundingClientRect();
  const row = Math.floor(((event.clientY - rect.top - area.y) / area.h) * state.fit.matrix.rows);
  setHover(row >= 0 && row < state.fit.matrix.rows ? row : null);
}

/** Forgets what was drawn, so that the next draw repaints every view (new data, another colour theme). */
export function forgetDrawn() {
  for (const name of Object.keys(drawn)) delete drawn[name];
}

subscribe('fit', scheduleDraw);
subscribe('view', scheduleDraw);
