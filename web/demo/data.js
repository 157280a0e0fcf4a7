// Example data sets for the demo, and the small statistics the page needs to set up its controls.

/** A seeded uniform generator on [0, 1) (mulberry32), so examples are the same on every load. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(rand) {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

/** The examples: each makes n rows of x (n × dim, row-major) and y. */
export const EXAMPLES = {
  sine: { label: 'Sine + noise', dim: 1, make: (t, rand) => [[t * 10], Math.sin(t * 10) + 0.3 * normal(rand)] },
  step: { label: 'A step', dim: 1, make: (t, rand) => [[t * 10], (t < 0.5 ? 0 : 1) + 0.15 * normal(rand)] },
  hetero: {
    label: 'Heteroscedastic noise',
    dim: 1,
    make: (t, rand) => [[t * 10], 0.5 * t * 10 - 2 + (0.05 + 0.6 * t) * normal(rand)],
  },
  surface: {
    label: '2-D surface',
    dim: 2,
    make: (t, rand) => {
      const a = 4 * t - 2;
      const b = 4 * rand() - 2;
      return [[a, b], Math.sin(2 * a) * Math.cos(1.5 * b) + 0.2 * normal(rand)];
    },
  },
};

/** Generates an example: { names, x (Float64Array n·dim), y (Float64Array n), dim }. */
export function generate(name, n, seed = 20240607) {
  const example = EXAMPLES[name];
  const rand = random(seed);
  const x = new Float64Array(n * example.dim);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const [xi, yi] = example.make(rand(), rand);
    x.set(xi, i * example.dim);
    y[i] = yi;
  }
  const names = example.dim === 1 ? ['x', 'y'] : ['x₁', 'x₂', 'y'];
  return { names, x, y, dim: example.dim };
}

/** Per column of x (n × dim): min, max and standard deviation. */
export function columnStats(x, dim) {
  const n = x.length / dim;
  return Array.from({ length: dim }, (_, d) => {
    let min = Infinity;
    let max = -Infinity;
    let sum = 0;
    let sq = 0;
    for (let i = 0; i < n; i++) {
      const v = x[i * dim + d];
      if (v < min) min = v;
      if (v > max) max = v;
      sum += v;
      sq += v * v;
    }
    const mean = sum / n;
    const sd = Math.sqrt(Math.max(0, sq / n - mean * mean));
    return { min, max, sd: sd > 0 ? sd : 1 };
  });
}

/** Min and max of y, padded by `fraction` of the range on both sides. */
export function paddedRange(values, fraction = 0.06) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (!(hi > lo)) {
    lo -= 1;
    hi += 1;
  }
  const pad = (hi - lo) * fraction;
  return [lo - pad, hi + pad];
}
