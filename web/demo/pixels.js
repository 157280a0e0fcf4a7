// Scales, the colour ramp and the data's point layers (1-D: squares written as pixels; 2-D: dots coloured by y):
// shared by the page (plot-fit.js) and the parse worker, which paints the main plot's point layer off the main thread
// (paintPoints), so that a new data set of 10⁵ points does not hold it.

/** A linear (or log10) map from [d0, d1] to [r0, r1], with its inverse. */
export function scale([d0, d1], [r0, r1], log = false) {
  const f = log ? Math.log10 : (v) => v;
  const a = f(d0);
  const b = f(d1);
  const map = (v) => r0 + ((f(v) - a) / (b - a || 1)) * (r1 - r0);
  map.invert = (p) => {
    const t = a + ((p - r0) / (r1 - r0)) * (b - a);
    return log ? 10 ** t : t;
  };
  map.domain = [d0, d1];
  return map;
}

/**
 * Points as squares of half-side `r` CSS pixels (every `step`-th row), written as W × H device pixels (`k` per CSS
 * pixel) of one colour [R, G, B bytes, A in [0, 1]]; overlaps compose as fillRect's would (alpha over alpha). Returns
 * the pixels as little-endian RGBA words (every browser this page runs in is little-endian). Tens of thousands of
 * fillRect calls took over 100 ms on a loaded 2-core machine; this loop takes a fraction of that.
 */
export function coverPixels({ W, H, k, sx, sy, x, y, dim, step, r, rgba: [R, G, B, A] }) {
  const cover = new Float32Array(W * H);
  const half = r * k;
  for (let i = 0; i < y.length; i += step) {
    const cx = sx(x[i * dim]) * k;
    const cy = sy(y[i]) * k;
    const x0 = Math.max(0, Math.round(cx - half));
    const x1 = Math.min(W, Math.round(cx + half));
    const y1 = Math.min(H, Math.round(cy + half));
    for (let py = Math.max(0, Math.round(cy - half)); py < y1; py++) {
      for (let px = x0; px < x1; px++) cover[py * W + px] += A * (1 - cover[py * W + px]);
    }
  }
  const out = new Uint32Array(W * H);
  const rgb = R | (G << 8) | (B << 16);
  for (let p = 0; p < cover.length; p++) if (cover[p] > 0) out[p] = (rgb | (Math.round(cover[p] * 255) << 24)) >>> 0;
  return out;
}

/** A colour ramp (viridis-like) for t in [0, 1]. */
export function ramp(t) {
  const stops = [
    [68, 1, 84],
    [59, 82, 139],
    [33, 145, 140],
    [94, 201, 98],
    [253, 231, 37],
  ];
  const u = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(u));
  const f = u - i;
  return stops[i].map((a, k) => Math.round(a + (stops[i + 1][k] - a) * f));
}

/**
 * The 2-D data as dots coloured by y on `ramp` over `colourDomain` (at most 20,000, evenly strided), on a 2-D context
 * `g` in CSS pixels: ringed in `edge` up to 5,000 points, smaller and unringed beyond.
 */
export function paintSurfacePoints(g, { sx, sy, x, y, colourDomain: [c0, c1], edge }) {
  const n = y.length;
  const step = Math.max(1, Math.ceil(n / 20_000));
  g.strokeStyle = edge;
  for (let i = 0; i < n; i += step) {
    const [R, G, B] = ramp((y[i] - c0) / (c1 - c0));
    g.fillStyle = `rgb(${R},${G},${B})`;
    g.beginPath();
    g.arc(sx(x[i * 2]), sy(x[i * 2 + 1]), n > 5000 ? 1.5 : 3, 0, 2 * Math.PI);
    g.fill();
    if (n <= 5000) g.stroke();
  }
}

/**
 * The point layer of `spec` ({ kind: 'scatter' (1-D: coverPixels' fields) or 'surface' (paintSurfacePoints'), W, H,
 * k, xDomain, xRange, yDomain, yRange }: scales as domains and CSS-pixel ranges, since functions cannot cross to a
 * worker) as an ImageBitmap, in a worker.
 */
export function paintPoints(spec) {
  const sx = scale(spec.xDomain, spec.xRange);
  const sy = scale(spec.yDomain, spec.yRange);
  const canvas = new OffscreenCanvas(spec.W, spec.H);
  const g = canvas.getContext('2d');
  if (spec.kind === 'surface') {
    g.setTransform(spec.k, 0, 0, spec.k, 0, 0);
    paintSurfacePoints(g, { ...spec, sx, sy });
  } else {
    const pixels = coverPixels({ ...spec, sx, sy });
    g.putImageData(new ImageData(new Uint8ClampedArray(pixels.buffer), spec.W, spec.H), 0, 0);
  }
  return canvas.transferToImageBitmap();
}
