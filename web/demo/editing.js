// Editing the data by hand on the 1-D plot ("add and move points"): a click adds a point, a drag moves one, each
// undoable; otherwise a click or tap inspects the nearest query.
import { hoverAt, scheduleDraw } from './drawing.js';
import { setData } from './loading.js';
import { h1 } from './settings.js';
import { state } from './state.js';
import { ui } from './ui.js';

/** Where the pointer is in data coordinates (1-D plot), or null outside the plot. */
function pointerAt(event) {
  const { data, view } = state;
  if (!data || data.dim !== 1 || !state.scales) return null;
  const rect = ui.plot.getBoundingClientRect();
  const x = state.scales.sx.invert(event.clientX - rect.left);
  const y = state.scales.sy.invert(event.clientY - rect.top);
  const inside = x >= view.xDomain[0] && x <= view.xDomain[1] && y >= view.yDomain[0] && y <= view.yDomain[1];
  return inside ? { x, y } : null;
}

// Dragging a point moves it on screen at once and refits when it is dropped.
let dragMoves = 0;

export function startDrag(event) {
  const { data } = state;
  if (!ui.addMode.checked || !pointerAt(event)) return;
  const rect = ui.plot.getBoundingClientRect();
  const px = event.clientX - rect.left;
  const py = event.clientY - rect.top;
  let best = -1;
  let bestD = 36; // within 6 px
  for (let i = 0; i < data.y.length; i++) {
    const d = (state.scales.sx(data.x[i]) - px) ** 2 + (state.scales.sy(data.y[i]) - py) ** 2;
    if (d < bestD) {
      bestD = d;
      best = i;
    }
  }
  if (best < 0) return;
  state.dragging = { index: best, moved: false, before: [data.x[best], data.y[best]] };
  event.preventDefault();
}

export function moveDrag(event) {
  if (!state.dragging) return;
  const at = pointerAt(event);
  if (!at) return;
  state.data.x[state.dragging.index] = at.x;
  state.data.y[state.dragging.index] = at.y;
  state.data.version = `${state.version}.${++dragMoves}`; // repaints the point layer
  state.dragging.moved = true;
  scheduleDraw();
}

export function endDrag() {
  if (!state.dragging) return;
  const { moved, index, before } = state.dragging;
  state.dragging = null;
  if (moved) {
    ui.plot.dataset.dragged = '1'; // the click that ends a drag adds no point
    const x = Float64Array.from(state.data.x);
    const y = Float64Array.from(state.data.y);
    [x[index], y[index]] = before;
    remember({ ...state.data, x, y });
    setData(
      { ...state.data, example: null, dataset: null, source: withClicks(state.data.source) },
      { h: h1(), edit: true },
    );
  }
}

/** Keeps `data` (as it was before an edit) for Undo; at most 50 steps. */
function remember(data) {
  state.undo.push(data);
  if (state.undo.length > 50) state.undo.shift();
  ui.undo.disabled = false;
}

export function undo() {
  const data = state.undo.pop();
  ui.undo.disabled = !state.undo.length;
  if (data) setData(data, { h: h1(), edit: true });
}

const withClicks = (source) => (source.endsWith(' and edited points') ? source : `${source} and edited points`);

/** A click or tap on the plot: adds a point in "add and move points" mode, else inspects the nearest query. */
export function addPoint(event) {
  if (ui.plot.dataset.dragged) {
    delete ui.plot.dataset.dragged;
    return;
  }
  if (!ui.addMode.checked) {
    hoverAt(event);
    return;
  }
  const { data, view } = state;
  // A point added with a category would have no level: editing is off then (loading.js).
  if (!data || data.dim !== 1 || data.category || !state.scales) return;
  const rect = ui.plot.getBoundingClientRect();
  const x = state.scales.sx.invert(event.clientX - rect.left);
  const y = state.scales.sy.invert(event.clientY - rect.top);
  if (!(x >= view.xDomain[0] && x <= view.xDomain[1] && y >= view.yDomain[0] && y <= view.yDomain[1])) return;
  const xs = new Float64Array(data.y.length + 1);
  const ys = new Float64Array(data.y.length + 1);
  xs.set(data.x);
  ys.set(data.y);
  xs[data.y.length] = x;
  ys[data.y.length] = y;
  remember(data);
  setData(
    { ...data, x: xs, y: ys, example: null, dataset: null, source: withClicks(data.source) },
    { h: h1(), edit: true },
  );
}
