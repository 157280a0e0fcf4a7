// The main plot with a category: each level's points and curve in a colour of its own (CSS --level-0 … --level-5,
// taken in turn), its band as two thin lines of that colour, and a legend naming the levels.
import { css, line } from './plot-frame.js';

const COLOURS = 6;
/** Level k's colour. */
export const levelColour = (k) => css(`--level-${k % COLOURS}`);

/** The data's points, each in its level's colour (at most `limit`, evenly strided). */
export function scatterLevels(ctx, sx, sy, data, limit) {
  const { x, y, category } = data;
  const n = y.length;
  const step = Math.max(1, Math.ceil(n / limit));
  const r = n > 5000 ? 1 : 2.5;
  const colours = category.labels.map((_, k) => levelColour(k));
  for (let i = 0; i < n; i += step) {
    ctx.fillStyle = colours[category.codes[i]];
    ctx.fillRect(sx(x[i]) - r, sy(y[i]) - r, 2 * r, 2 * r);
  }
}

/** Each level's curve (and its band's edges when `showBand`), then the legend at the top left of the plot area. */
export function drawLevelCurves(ctx, fit, sx, sy, showBand, pad) {
  const q = fit.queries;
  fit.curves.forEach((curve, k) => {
    ctx.strokeStyle = levelColour(k);
    if (showBand) {
      ctx.lineWidth = 1;
      ctx.setLineDash([3, 3]);
      line(ctx, q, curve.lower, sx, sy);
      line(ctx, q, curve.upper, sx, sy);
      ctx.setLineDash([]);
    }
    ctx.lineWidth = 2;
    ctx.lineJoin = 'round';
    line(ctx, q, curve.mean, sx, sy);
  });
  ctx.font = '12px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'left';
  fit.curves.forEach((curve, k) => {
    const y = pad.top + 10 + 16 * k;
    ctx.fillStyle = levelColour(k);
    ctx.fillRect(pad.left + 8, y - 1.5, 16, 3);
    ctx.fillStyle = css('--fg');
    ctx.fillText(`${fit.category}: ${curve.label}`, pad.left + 30, y);
  });
}
