// What every plot shares: a canvas sized for the device's pixels, the theme's colours, and the frame (scales, grid,
// tick labels, axis titles). Each also draws into svg.js's stand-in canvas, whose context records SVG: keep to the
// context calls it implements.
import { scale } from './pixels.js';
import { logTicks, ticks } from './ticks.js';

export const FONT = 12; // px, the plots' text

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

/** The theme's value of CSS custom property `name` (colours). */
export const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

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

export function clip(ctx, width, height, pad) {
  ctx.beginPath();
  ctx.rect(pad.left, pad.top, width - pad.left - pad.right, height - pad.top - pad.bottom);
  ctx.clip();
}

/**
 * A transparent layer the size of the canvas, painted once per `key` (data, size, scales, theme) and reused, so that

/** A line through (xs[i], ys[i]); NaN breaks it. */
export function line(ctx, xs, ys, sx, sy) {
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
