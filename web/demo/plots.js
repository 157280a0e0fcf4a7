// Canvas drawing for the demo: axes, the fit with its band, the 2-D surface, the attention matrix, weight bars and
// the CV curve. Pure functions of what they are given; colours come from CSS custom properties. Each also draws into
// svg.js's stand-in canvas, whose context records SVG: keep to the context calls it implements.
import { coverPixels, paintSurfacePoints, ramp, scale } from './pixels.js';

export { ramp, scale };

/** Sizes the canvas for the device pixel ratio; returns its 2-D context in CSS pixels, or null when hidden. */
export function prepare(canvas) {
  const dpr = canvas.pixelRatio || window.devicePixelRatio || 1; // an SVG stand-in has its own (1)
  const width = canvas.clientWidth;
  const height = canvas.clientHeight;
  if (!width || !height) return null;
  const pw = Math.round(width * dpr);
  const ph = Math.round(height * dpr);
  if (canvas.width !== pw || canvas.height !== ph) {
    canvas.width = pw;
    canvas.height = ph;
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  ctx.font = `${FONT}px system-ui, sans-serif`;
  return { ctx, width, height };
}

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

const SUPERSCRIPT = {
  '-': '\u207b',
  0: '\u2070',
  1: '\u00b9',
  2: '\u00b2',
  3: '\u00b3',
  4: '\u2074',
  5: '\u2075',
  6: '\u2076',
  7: '\u2077',
  8: '\u2078',
  9: '\u2079',
};

/** v as m×10ⁿ (three significant digits at most), for values no fixed notation writes briefly. */
function scientific(v) {
  if (v === 0) return '0';
  const e = Math.floor(Math.log10(Math.abs(v)));
  const m = Number((v / 10 ** e).toPrecision(3));
  const power = `10${[...String(e)].map((c) => SUPERSCRIPT[c]).join('')}`;
  return m === 1 ? power : `${m}\u00d7${power}`;
}

/** A tick label at the precision of the tick step, with a true minus sign; thousands grouped from 100,000 on. */
export function tickLabel(v, step) {
  if (Math.abs(v) < Math.abs(step) * 1e-9) v = 0;
  const a = Math.abs(step);
  let s;
  if (a >= 1e-4 && a < 1e12 && Math.abs(v) < 1e12) {
    const decimals = Math.max(0, -Math.floor(Math.log10(a) + 1e-9));
    s =
      Math.abs(v) >= 1e5
        ? v.toLocaleString('en', { minimumFractionDigits: decimals, maximumFractionDigits: decimals })
        : v.toFixed(decimals);
  } else {
    s = scientific(v);
  }
  return s.replace('-', '\u2212');
}

/** Ticks at 1, 2 or 5 times a power of ten, about `count` of them (none for a range no float can step through). */
export function ticks(lo, hi, count) {
  const raw = (hi - lo) / count || 1;
  if (!Number.isFinite(raw) || !Number.isFinite(lo)) return [];
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].find((m) => m * power >= raw) * power;
  const out = [];
  const first = Math.ceil(lo / step);
  for (let k = first; k * step <= hi + step * 1e-9 && out.length < 50; k++) {
    if (!(k * step > (k - 1) * step)) break; // a step below the values' resolution
    out.push({ value: k * step, label: tickLabel(k * step, step) });
  }
  return out;
}

/** A log-axis label: 10, 20, 0.05 as numbers are written; beyond 10⁻⁴ … 10⁶ as powers of ten. */
export function logLabel(v) {
  return (v >= 1e-4 && v < 1e6 ? String(Number(v.toPrecision(1))) : scientific(v)).replace('-', '\u2212');
}

function logTicks(lo, hi) {
  const out = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v >= lo && v <= hi) out.push({ value: v, label: logLabel(v) });
    }
  }
  return out;
}

const FONT = 12; // px, the plots' text

/**
 * The plot frame: scales for the inner area, grid lines, tick labels and axis titles. The left margin is measured
 * from the widest y tick label, so the y title (turned, at the far left) never overlaps a label; the x title sits
 * centred under the x labels. Returns the scales and the margins (`pad`).
 */
export function frame(
  { ctx, width, height },
  xDomain,
  yDomain,
  { xLog = false, xTitle = '', yTitle = '', right = 12, top = 10, xAxis = null, yAxis = null } = {},
) {
  const yCount = Math.max(2, Math.min(6, Math.floor(height / 60)));
  const yTicks = yAxis ? yAxis.ticks(...yDomain, yCount) : ticks(...yDomain, yCount);
  let labelWidth = 0;
  for (const t of yTicks) labelWidth = Math.max(labelWidth, ctx.measureText(t.label).width);
  const pad = { left: Math.ceil((yTitle ? FONT + 6 : 2) + labelWidth + 7), right, top, bottom: xTitle ? 36 : 22 };
  const sx = scale(xDomain, [pad.left, width - pad.right], xLog);
  const sy = scale(yDomain, [height - pad.bottom, pad.top]);
  ctx.lineWidth = 1;
  ctx.strokeStyle = css('--grid');
  ctx.fillStyle = css('--muted');
  // Dates and clock times are wider labels than most numbers: fewer of them.
  const xCount = Math.max(
    2,
    Math.min(8, Math.floor((width - pad.left - pad.right) / (xAxis && xAxis.kind !== 'number' ? 120 : 80))),
  );
  const xTicks = xLog
    ? (xAxis?.hTicks ?? logTicks)(...xDomain)
    : xAxis
      ? xAxis.ticks(...xDomain, xCount)
      : ticks(...xDomain, xCount);
  // The y labels go first: an x label at the left edge that would run into the lowest one is left out.
  const yBoxes = [];
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const t of yTicks) {
    const py = Math.round(sy(t.value)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(pad.left, py);
    ctx.lineTo(width - pad.right, py);
    ctx.stroke();
    ctx.fillText(t.label, pad.left - 5, py);
    yBoxes.push({ right: pad.left - 5, bottom: py + FONT }); // a line box is taller than the font size
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const t of xTicks) {
    const px = Math.round(sx(t.value)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(px, pad.top);
    ctx.lineTo(px, height - pad.bottom);
    ctx.stroke();
    // A label at the edge (100 days, 2021-07) is moved inside the canvas rather than cut.
    const half = ctx.measureText(t.label).width / 2;
    const cx = Math.min(Math.max(px, half), width - half);
    const top = height - pad.bottom + 4;
    if (yBoxes.some((b) => cx - half < b.right + 2 && top < b.bottom)) continue;
    ctx.fillText(t.label, cx, top);
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'bottom';
  if (xTitle) ctx.fillText(xTitle, (pad.left + width - pad.right) / 2, height - 1);
  if (yTitle) {
    ctx.save();
    ctx.translate(2, (pad.top + height - pad.bottom) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = 'top';
    ctx.fillText(yTitle, 0, 0);
    ctx.restore();
  }
  ctx.strokeStyle = css('--axis');
  ctx.strokeRect(pad.left + 0.5, pad.top + 0.5, width - pad.left - pad.right - 1, height - pad.top - pad.bottom - 1);
  return { sx, sy, pad };
}

function clip(ctx, width, height, pad) {
  ctx.beginPath();
  ctx.rect(pad.left, pad.top, width - pad.left - pad.right, height - pad.top - pad.bottom);
  ctx.clip();
}

/**
 * A transparent layer the size of the canvas, painted once per `key` (data, size, scales, theme) and reused, so that
 * tens of thousands of points cost one drawImage per frame while the fit changes.
 */
function layer(cache, key, { ctx, width, height }, paint) {
  // Into SVG the points go as vectors, never as a raster; the caller then has nothing to copy.
  if (ctx.vector) {
    paint(ctx);
    return null;
  }
  if (cache.key !== key) {
    const dpr = window.devicePixelRatio || 1;
    const canvas = new OffscreenCanvas(Math.round(width * dpr), Math.round(height * dpr));
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    paint(ctx);
    Object.assign(cache, { key, canvas });
  }
  return cache.canvas;
}

/**
 * layer() for the data's points. On screen (a cache with `paintElsewhere`, drawing.js), more than MANY_POINTS are
 * painted in the parse worker from `spec()` (scales as domains and ranges: functions cannot cross to a worker) and
 * drawn once they come back; meanwhile the last layer of the same data (another size: a resize) stands in,
 * stretched. Exports and fewer points are painted here by `paint`.
 */
function pointLayer(cache, key, c, data, spec, paint) {
  if (!cache.paintElsewhere || data.y.length <= MANY_POINTS || c.ctx.vector) return layer(cache, key, c, paint);
  if (cache.key !== key && cache.asked !== key) {
    cache.asked = key;
    const dpr = window.devicePixelRatio || 1;
    cache.paintElsewhere(cache, key, data.version, {
      ...spec(),
      W: Math.round(c.width * dpr),
      H: Math.round(c.height * dpr),
      k: dpr,
    });
  }
  return cache.key === key || cache.version === data.version ? cache.canvas : null;
}

const MANY_POINTS = 5000; // beyond this many points: 1-pixel squares, written as pixels
const SCATTER_LIMIT = 50_000; // points drawn at most (evenly strided)

/** Points as small squares (fast for tens of thousands); at most `limit` of them, evenly strided. */
function scatter(ctx, sx, sy, x, y, dim, color, limit = SCATTER_LIMIT) {
  const n = y.length;
  const step = Math.max(1, Math.ceil(n / limit));
  const r = n > MANY_POINTS ? 1 : 2;
  if (n > MANY_POINTS && ctx.canvas instanceof OffscreenCanvas) {
    scatterPixels(ctx, sx, sy, x, y, dim, color, step, r);
    return;
  }
  ctx.fillStyle = color;
  for (let i = 0; i < n; i += step) ctx.fillRect(sx(x[i * dim]) - r, sy(y[i]) - r, 2 * r, 2 * r);
}

/** `color` (any CSS colour) as [r, g, b] bytes and an alpha in [0, 1], read back from a 1-pixel canvas. */
function rgba(color) {
  const ctx = new OffscreenCanvas(1, 1).getContext('2d', { willReadFrequently: true });
  ctx.fillStyle = color;
  ctx.fillRect(0, 0, 1, 1);
  const [r, g, b, a] = ctx.getImageData(0, 0, 1, 1).data;
  return [r, g, b, a / 255];
}

/** scatter() for many points, written as pixels into the layer (pixels.js). */
function scatterPixels(ctx, sx, sy, x, y, dim, color, step, r) {
  const { width: W, height: H } = ctx.canvas;
  const pixels = coverPixels({ W, H, k: ctx.getTransform().a, sx, sy, x, y, dim, step, r, rgba: rgba(color) });
  ctx.putImageData(new ImageData(new Uint8ClampedArray(pixels.buffer), W, H), 0, 0);
}

/** A line through (xs[i], ys[i]); NaN breaks it. */
function line(ctx, xs, ys, sx, sy) {
  ctx.beginPath();
  let pen = false;
  for (let i = 0; i < ys.length; i++) {
    if (!Number.isFinite(ys[i])) {
      pen = false;
      continue;
    }
    if (pen) ctx.lineTo(sx(xs[i]), sy(ys[i]));
    else ctx.moveTo(sx(xs[i]), sy(ys[i]));
    pen = true;
  }
  ctx.stroke();
}

/**
 * 1-D view: data, band, fit, thin-support shading (effective points below `thin`), and for a hovered query its
 * position and its top keys.
 */
export function drawFit(canvas, { data, fit, showBand, hover, thin, xDomain, yDomain, cache }) {
  const c = prepare(canvas);
  if (!c) return null;
  const { ctx, width, height } = c;
  const { sx, sy, pad } = frame(c, xDomain, yDomain, {
    xTitle: data.names[0],
    yTitle: data.names[data.names.length - 1],
    xAxis: data.axes?.[0],
  });
  ctx.save();
  clip(ctx, width, height, pad);
  const color = css('--point');
  const key = `${data.version}|${width}|${height}|${xDomain}|${yDomain}|${color}`;
  const n = data.y.length;
  const points = pointLayer(
    cache,
    key,
    c,
    data,
    () => ({
      kind: 'scatter',
      x: data.x,
      y: data.y,
      dim: 1,
      xDomain: sx.domain,
      xRange: [pad.left, width - pad.right],
      yDomain: sy.domain,
      yRange: [height - pad.bottom, pad.top],
      step: Math.max(1, Math.ceil(n / SCATTER_LIMIT)),
      r: 1,
      rgba: rgba(color),
    }),
    (g) => scatter(g, sx, sy, data.x, data.y, 1, color),
  );
  if (points) ctx.drawImage(points, 0, 0, width, height);
  if (fit) {
    const q = fit.queries;
    ctx.fillStyle = css('--thin');
    for (let i = 0; fit.effectiveKeys && i < q.length; i++) {
      // LOWESS reports no effective points
      if (fit.effectiveKeys[i] < thin) {
        const a = sx(i ? (q[i - 1] + q[i]) / 2 : q[i]);
        const b = sx(i + 1 < q.length ? (q[i] + q[i + 1]) / 2 : q[i]);
        ctx.fillRect(a, height - pad.bottom - 6, b - a + 0.5, 6);
      }
    }
    if (showBand) {
      ctx.fillStyle = css('--band');
      ctx.beginPath();
      let open = false;
      const close = (end) => {
        for (let k = end; k >= 0 && Number.isFinite(fit.lower[k]); k--) ctx.lineTo(sx(q[k]), sy(fit.lower[k]));
        ctx.closePath();
      };
      for (let i = 0; i < q.length; i++) {
        const ok = Number.isFinite(fit.upper[i]) && Number.isFinite(fit.lower[i]);
        if (ok && !open) {
          ctx.moveTo(sx(q[i]), sy(fit.upper[i]));
          open = true;
        } else if (ok) ctx.lineTo(sx(q[i]), sy(fit.upper[i]));
        else if (open) {
          close(i - 1);
          open = false;
        }
      }
      if (open) close(q.length - 1);
      ctx.fill();
      // The band's edges carry its contrast (a light fill alone would not reach 3:1 against the background).
      ctx.strokeStyle = css('--band-edge');
      ctx.lineWidth = 1;
      line(ctx, q, fit.lower, sx, sy);
      line(ctx, q, fit.upper, sx, sy);
    }
    ctx.strokeStyle = css('--curve');
    ctx.lineWidth = 2;
    ctx.lineJoin = 'round';
    line(ctx, q, fit.mean, sx, sy);
    // LOWESS: the points its robustness weights set below 1/2 are ringed (the outliers the curve discounts).
    // Likewise a robust kernel fit's (the worker sends those points: ringX, ringY).
    if (fit.robust?.ringX) {
      ctx.strokeStyle = css('--accent');
      ctx.lineWidth = 1.5;
      for (let i = 0; i < fit.robust.ringX.length; i++) {
        ctx.beginPath();
        ctx.arc(sx(fit.robust.ringX[i]), sy(fit.robust.ringY[i]), 5, 0, 2 * Math.PI);
        ctx.stroke();
      }
    }
    if (fit.weights && fit.observed) {
      ctx.strokeStyle = css('--accent');
      ctx.lineWidth = 1.5;
      for (let i = 0; i < q.length; i++) {
        if (!(fit.weights[i] < 0.5)) continue;
        ctx.beginPath();
        ctx.arc(sx(q[i]), sy(fit.observed[i]), 5, 0, 2 * Math.PI);
        ctx.stroke();
      }
    }
  }
  if (hover) {
    ctx.strokeStyle = css('--accent');
    ctx.lineWidth = 1;
    ctx.setLineDash([4, 3]);
    ctx.beginPath();
    ctx.moveTo(sx(hover.query[0]), pad.top);
    ctx.lineTo(sx(hover.query[0]), height - pad.bottom);
    ctx.stroke();
    ctx.setLineDash([]);
    highlight(
      ctx,
      hover.top,
      (k) => sx(k.x[0]),
      (k) => sy(k.y),
    );
  }
  ctx.restore();
  return { sx, sy, pad };
}

/** Rings around the top keys, sized by weight. */
function highlight(ctx, top, px, py) {
  if (!top.length) return;
  const wMax = top[0].w || 1;
  ctx.strokeStyle = css('--accent');
  ctx.lineWidth = 2;
  for (const k of top) {
    ctx.beginPath();
    ctx.arc(px(k), py(k), 3 + 7 * Math.sqrt(k.w / wMax), 0, 2 * Math.PI);
    ctx.stroke();
  }
}

/** The heat map's key: the colour ramp from yDomain[0] (bottom) to yDomain[1], with tick values and y's name. */
function colourScale(ctx, { x, top, bottom }, yDomain, name) {
  const steps = 64;
  const h = (bottom - top) / steps;
  for (let k = 0; k < steps; k++) {
    const [R, G, B] = ramp((k + 0.5) / steps);
    ctx.fillStyle = `rgb(${R},${G},${B})`;
    ctx.fillRect(x, bottom - (k + 1) * h, 12, h + 0.5);
  }
  const sy = scale(yDomain, [bottom, top]);
  ctx.fillStyle = css('--muted');
  ctx.strokeStyle = css('--axis');
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  for (const t of ticks(...yDomain, Math.max(2, Math.floor((bottom - top) / 50)))) {
    const py = Math.round(sy(t.value)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(x + 12, py);
    ctx.lineTo(x + 15, py);
    ctx.stroke();
    ctx.fillText(t.label, x + 17, py);
  }
  ctx.textAlign = 'right';
  ctx.textBaseline = 'bottom';
  if (name) ctx.fillText(name, x + 40, top - 4);
}

/** 2-D view: the fitted surface as a heat map over the query grid, the data on top, and the hovered query's keys. */
export function drawSurface(canvas, { data, fit, hover, side, box, yDomain, cache, thin }) {
  const c = prepare(canvas);
  if (!c) return null;
  const { ctx, width, height } = c;
  const { sx, sy, pad } = frame(c, box[0], box[1], {
    xTitle: data.names[0],
    yTitle: data.names[1],
    right: 70,
    top: 24,
    xAxis: data.axes?.[0],
    yAxis: data.axes?.[1],
  });
  colourScale(ctx, { x: width - 58, top: pad.top, bottom: height - pad.bottom }, yDomain, data.names[2]);
  ctx.save();
  clip(ctx, width, height, pad);
  const t = (v) => (v - yDomain[0]) / (yDomain[1] - yDomain[0]);
  if (fit) {
    const img = new ImageData(side, side);
    for (let r = 0; r < side; r++) {
      for (let col = 0; col < side; col++) {
        const [R, G, B] = ramp(t(fit.mean[r * side + col]));
        const p = ((side - 1 - r) * side + col) * 4;
        const k = r * side + col;
        img.data.set([R, G, B, !Number.isFinite(fit.mean[k]) ? 0 : fit.effectiveKeys[k] < thin ? 80 : 255], p);
      }
    }
    const tile = new OffscreenCanvas(side, side);
    tile.getContext('2d').putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = true;
    const q = fit.queries;
    const x0 = sx(q[0]);
    const x1 = sx(q[(side - 1) * 2]);
    const y1 = sy(q[1]);
    const y0 = sy(q[(side * side - 1) * 2 + 1]);
    const cw = (x1 - x0) / (side - 1);
    const ch = (y1 - y0) / (side - 1);
    ctx.drawImage(tile, x0 - cw / 2, y0 - ch / 2, x1 - x0 + cw, y1 - y0 + ch);
  }
  const edge = css('--bg');
  const key = `${data.version}|${width}|${height}|${box}|${yDomain}|${edge}`;
  const points = pointLayer(
    cache,
    key,
    c,
    data,
    () => ({
      kind: 'surface',
      x: data.x,
      y: data.y,
      xDomain: sx.domain,
      xRange: [pad.left, width - pad.right],
      yDomain: sy.domain,
      yRange: [height - pad.bottom, pad.top],
      colourDomain: yDomain,
      edge,
    }),
    (g) => paintSurfacePoints(g, { sx, sy, x: data.x, y: data.y, colourDomain: yDomain, edge }),
  );
  if (points) ctx.drawImage(points, 0, 0, width, height);
  if (hover) {
    ctx.fillStyle = css('--accent');
    ctx.fillRect(sx(hover.query[0]) - 4, sy(hover.query[1]) - 4, 8, 8);
    highlight(
      ctx,
      hover.top,
      (k) => sx(k.x[0]),
      (k) => sy(k.x[1]),
    );
  }
  ctx.restore();
  return { sx, sy, pad };
}

/** The attention matrix: rows are queries, columns key bins in x order; weight → colour (square root for contrast). */
export function drawMatrix(canvas, matrix, hoverRow) {
  const c = prepare(canvas);
  if (!c || !matrix) return null;
  const { ctx, width, height } = c;
  const { rows, bins, binned } = matrix;
  const img = new ImageData(bins, rows);
  for (let r = 0; r < rows; r++) {
    let max = 0;
    for (let b = 0; b < bins; b++) max = Math.max(max, binned[r * bins + b]);
    for (let b = 0; b < bins; b++) {
      const [R, G, B] = ramp(Math.sqrt(binned[r * bins + b] / (max || 1)));
      img.data.set([R, G, B, 255], (r * bins + b) * 4);
    }
  }
  const tile = new OffscreenCanvas(bins, rows);
  tile.getContext('2d').putImageData(img, 0, 0);
  const area = { x: 8, y: 6, w: width - 16, h: height - 26 };
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(tile, area.x, area.y, area.w, area.h);
  ctx.fillStyle = css('--muted');
  ctx.textBaseline = 'bottom';
  ctx.textAlign = 'left';
  ctx.fillText(`keys → (${matrix.keys.toLocaleString('en')} in ${bins} bins, by x)`, area.x, height - 2);
  ctx.textAlign = 'right';
  ctx.fillText(`↓ ${rows} queries`, width - 8, height - 2);
  if (hoverRow !== null && hoverRow !== undefined) {
    ctx.strokeStyle = css('--accent');
    ctx.lineWidth = 2;
    ctx.strokeRect(area.x, area.y + (hoverRow * area.h) / rows, area.w, area.h / rows);
  }
  return area;
}

/** One query's weights over the key bins as bars (`xAxis`: how x is written, see axes.js). */
export function drawBars(canvas, matrix, row, xAxis = null) {
  const c = prepare(canvas);
  if (!c || !matrix || row === null || row === undefined) return;
  const { ctx, width, height } = c;
  const { bins, binned, binStart } = matrix;
  const weights = binned.subarray(row * bins, (row + 1) * bins);
  let max = 0;
  for (const w of weights) max = Math.max(max, w);
  const { sx, sy } = frame(c, [binStart[0], binStart[bins]], [0, max || 1], { yTitle: 'weight', xAxis });
  ctx.fillStyle = css('--curve');
  for (let b = 0; b < bins; b++) {
    const x0 = sx(binStart[b]);
    const x1 = sx(binStart[b + 1]);
    ctx.fillRect(x0, sy(weights[b]), Math.max(1, x1 - x0 - 0.5), sy(0) - sy(weights[b]));
  }
}

/** The bandwidth search: score against h (log axis; `hAxis`, a date or time axis, labels it as durations), the chosen h and the current h marked. */
/** The fit's derivative at its queries (fit.slope) with its band (slopeLower, slopeUpper), over the main plot's x. */
export function drawSlope(canvas, fit, xDomain, xAxis, names) {
  const c = prepare(canvas);
  if (!c) return;
  const { ctx, width, height } = c;
  let lo = 0;
  let hi = 0;
  for (const a of [fit.slopeLower, fit.slopeUpper])
    for (const v of a)
      if (Number.isFinite(v)) {
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
  const padY = 0.05 * (hi - lo || 1);
  const { sx, sy, pad } = frame(c, xDomain, [lo - padY, hi + padY], {
    xTitle: names[0],
    yTitle: `d ${names[names.length - 1]} / d ${names[0]}`,
    xAxis,
  });
  ctx.save();
  clip(ctx, width, height, pad);
  const q = fit.queries;
  ctx.strokeStyle = css('--grid');
  ctx.beginPath();
  ctx.moveTo(pad.left, sy(0));
  ctx.lineTo(width - pad.right, sy(0));
  ctx.stroke();
  ctx.strokeStyle = css('--band-edge');
  ctx.lineWidth = 1;
  line(ctx, q, fit.slopeLower, sx, sy);
  line(ctx, q, fit.slopeUpper, sx, sy);
  ctx.strokeStyle = css('--curve');
  ctx.lineWidth = 2;
  line(ctx, q, fit.slope, sx, sy);
  ctx.restore();
}

export function drawSelection(canvas, selection, currentH, hAxis = null) {
  const c = prepare(canvas);
  if (!c || !selection || !selection.curve.scores.length) return;
  const { ctx } = c;
  const { bandwidths, scores } = selection.curve;
  const dim = bandwidths.length / scores.length;
  const points = Array.from(scores, (s, i) => ({ h: bandwidths[i * dim], s }))
    .filter((p) => Number.isFinite(p.s))
    .sort((a, b) => a.h - b.h);
  if (!points.length) return;
  const hs = points.map((p) => p.h).concat(currentH);
  const lo = Math.min(...points.map((p) => p.s));
  const hi = Math.max(...points.map((p) => p.s));
  const { sx, sy, pad } = frame(
    c,
    [Math.min(...hs) / 1.2, Math.max(...hs) * 1.2],
    [lo - 0.05 * (hi - lo || 1), hi + 0.05 * (hi - lo || 1)],
    {
      xLog: true,
      xTitle: 'h',
      xAxis: hAxis,
      yTitle: { aicc: 'AICc', learn: 'leave-one-out loss' }[selection.method] ?? 'CV score',
    },
  );
  ctx.strokeStyle = css('--curve');
  ctx.fillStyle = css('--curve');
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  points.forEach((p, i) => (i ? ctx.lineTo(sx(p.h), sy(p.s)) : ctx.moveTo(sx(p.h), sy(p.s))));
  ctx.stroke();
  for (const p of points) ctx.fillRect(sx(p.h) - 2, sy(p.s) - 2, 4, 4);
  const mark = (h, color, dash) => {
    ctx.strokeStyle = color;
    ctx.setLineDash(dash);
    ctx.beginPath();
    ctx.moveTo(sx(h), pad.top);
    ctx.lineTo(sx(h), c.height - pad.bottom);
    ctx.stroke();
    ctx.setLineDash([]);
  };
  mark(selection.bandwidth[0], css('--fg'), []);
  mark(currentH, css('--accent'), [4, 3]);
}
