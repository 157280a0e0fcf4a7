// Exported figures: a plot drawn by plot-*.js on an opaque background, under a title and a line of parameters (h,
// kernel, estimator, method) and over a legend, as PNG (canvas pixels) or SVG (svg.js), never with hover marks.
import { svgCanvas } from './svg.js';

const FONT = 'system-ui, sans-serif';
const HEAD = 46; // px above the plot: title and parameters
const LEGEND = 26; // px below it, when there is a legend
const PNG_SCALE = 2;

/**
 * A stand-in canvas of the plot's CSS size whose context draws `top` px down into `ctx` (a larger figure): a plot
 * sets its own transform (device pixels) and clears its canvas, so both are redirected here.
 */
function shifted(ctx, width, height, top, pixelRatio) {
  const context = new Proxy(ctx, {
    get(target, key) {
      if (key === 'setTransform') return (a, b, c, d, e, f) => target.setTransform(a, b, c, d, e, f + top * d);
      if (key === 'clearRect') return () => {};
      const value = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set: (target, key, value) => Reflect.set(target, key, value),
  });
  return {
    clientWidth: width,
    clientHeight: height,
    width: Math.round(width * pixelRatio),
    height: Math.round(height * pixelRatio),
    pixelRatio,
    getContext: () => context,
  };
}

/** Title and parameters on top, the legend's swatches and labels under the plot (at `legendTop`). */
function annotate(ctx, width, { title, params, legend, colors }, legendTop) {
  ctx.textAlign = 'left';
  ctx.textBaseline = 'top';
  ctx.fillStyle = colors.fg;
  ctx.font = `600 15px ${FONT}`;
  ctx.fillText(title, 8, 6);
  ctx.fillStyle = colors.muted;
  ctx.font = `12px ${FONT}`;
  ctx.fillText(params, 8, 27);
  if (!legend?.length) return;
  let x = 8;
  const y = legendTop + 8;
  ctx.textBaseline = 'middle';
  for (const item of legend) {
    if (item.kind === 'line') {
      ctx.strokeStyle = item.color;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(x, y + 5);
      ctx.lineTo(x + 18, y + 5);
      ctx.stroke();
    } else if (item.kind === 'ring') {
      ctx.strokeStyle = item.color;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.arc(x + 9, y + 5, 5, 0, 2 * Math.PI);
      ctx.stroke();
    } else if (item.kind === 'band') {
      ctx.fillStyle = item.color;
      ctx.fillRect(x, y, 18, 10);
      ctx.strokeStyle = item.edge;
      ctx.lineWidth = 1;
      ctx.strokeRect(x + 0.5, y + 0.5, 17, 9);
    } else {
      ctx.fillStyle = item.color;
      if (item.kind === 'point') ctx.fillRect(x + 6, y + 2, 6, 6);
      else ctx.fillRect(x, y + 2, 18, 6);
    }
    ctx.fillStyle = colors.muted;
    ctx.fillText(item.label, x + 24, y + 5);
    x += 24 + ctx.measureText(item.label).width + 18;
  }
}

/**
 * The figure for `canvas` (its on-screen size) as a Blob: `paint(standIn)` draws the plot on the stand-in it is
 * given; `spec` holds title, params, legend ([{ kind: 'point' | 'line' | 'band' | 'bar' | 'ring', color, label }]) and
 * colors ({ bg, fg, muted }).
 */
export function figure(canvas, format, spec, paint) {
  const width = canvas.clientWidth;
  const height = canvas.clientHeight;
  const total = HEAD + height + (spec.legend?.length ? LEGEND : 0);
  if (format === 'svg') {
    const target = svgCanvas(canvas, {
      title: spec.description ?? spec.title,
      background: spec.colors.bg,
      width,
      height: total,
    });
    const ctx = target.getContext();
    paint(shifted(ctx, width, height, HEAD, 1));
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    annotate(ctx, width, spec, HEAD + height);
    return Promise.resolve(new Blob([target.svg()], { type: 'image/svg+xml' }));
  }
  const out = document.createElement('canvas');
  out.width = width * PNG_SCALE;
  out.height = total * PNG_SCALE;
  const ctx = out.getContext('2d');
  ctx.setTransform(PNG_SCALE, 0, 0, PNG_SCALE, 0, 0);
  // Opaque: a transparent PNG shows as black or as a checkerboard in many viewers.
  ctx.fillStyle = spec.colors.bg;
  ctx.fillRect(0, 0, width, total);
  ctx.save();
  paint(shifted(ctx, width, height, HEAD, PNG_SCALE));
  ctx.restore();
  ctx.setTransform(PNG_SCALE, 0, 0, PNG_SCALE, 0, 0);
  annotate(ctx, width, spec, HEAD + height);
  return new Promise((resolve, reject) =>
    out.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('the PNG could not be made'))), 'image/png'),
  );
}
