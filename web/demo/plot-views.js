// The smaller plots: the attention matrix, one query's weights as bars, the derivative and the bandwidth search.
// Pure functions of what they are given; colours from CSS custom properties.
import { clip, css, frame, line, prepare } from './plot-frame.js';
import { ramp } from './pixels.js';

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

/**
 * The bandwidth search: score against h (log axis; `hAxis`, a date or time axis, labels it as durations), the chosen h
 * and the current h marked.
 */
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
