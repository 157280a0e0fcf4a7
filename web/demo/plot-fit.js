// The main plot: the 1-D fit (data, band, curve, thin support, rings, the inspected query) and the 2-D surface (a
// heat map with its colour scale, the data on top). The data's points are a cached layer, painted in the parse
// worker when there are many (pixels.js). Pure functions of what they are given; colours from CSS custom properties.
import { clip, css, frame, line, prepare } from './plot-frame.js';
import { coverPixels, paintSurfacePoints, ramp, scale } from './pixels.js';
import { ticks } from './ticks.js';
import { drawLevelCurves, scatterLevels } from './plot-categories.js';

/**
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
  // With a category the points take their level's colour, painted here (the parse worker paints one colour).
  const points = data.category
    ? layer(cache, `${key}|levels`, c, (g) => scatterLevels(g, sx, sy, data, SCATTER_LIMIT))
    : pointLayer(
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
      // LOWESS and loess report no effective points
      if (fit.effectiveKeys[i] < thin) {
        const a = sx(i ? (q[i - 1] + q[i]) / 2 : q[i]);
        const b = sx(i + 1 < q.length ? (q[i] + q[i + 1]) / 2 : q[i]);
        ctx.fillRect(a, height - pad.bottom - 6, b - a + 0.5, 6);
      }
    }
    if (fit.curves) drawLevelCurves(ctx, fit, sx, sy, showBand, pad);
    else if (showBand) {
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
    if (!fit.curves) {
      ctx.strokeStyle = css('--curve');
      ctx.lineWidth = 2;
      ctx.lineJoin = 'round';
      line(ctx, q, fit.mean, sx, sy);
    }
    // The points robustness weights set below 1/2 are ringed (the outliers the curve discounts): LOWESS's, a robust
    // kernel fit's and a symmetric loess's (the worker sends those points: ringX, ringY).
    if (fit.robust?.ringX) {
      ctx.strokeStyle = css('--accent');
      ctx.lineWidth = 1.5;
      for (let i = 0; i < fit.robust.ringX.length; i++) {
        ctx.beginPath();
        ctx.arc(sx(fit.robust.ringX[i]), sy(fit.robust.ringY[i]), 5, 0, 2 * Math.PI);
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
        // Faded where support is thin (kernel fits; loess reports no effective points).
        const faded = fit.effectiveKeys && fit.effectiveKeys[k] < thin;
        img.data.set([R, G, B, !Number.isFinite(fit.mean[k]) ? 0 : faded ? 80 : 255], p);
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
