import { init } from '../src/index.js';

const SAMPLES = 200;
const GRID = 400;
const X_MIN = 0;
const X_MAX = 10;
const NOISE = 0.3;
const SEED = 20240607;

const canvas = /** @type {HTMLCanvasElement} */ (document.getElementById('plot'));
const kernelSelect = /** @type {HTMLSelectElement} */ (document.getElementById('kernel'));
const slider = /** @type {HTMLInputElement} */ (document.getElementById('bandwidth'));
const bandwidthOut = /** @type {HTMLOutputElement} */ (document.getElementById('bandwidth-value'));
const timing = /** @type {HTMLElement} */ (document.getElementById('timing'));

window.demoState = { ready: false };

// Seeded so every reload (and every test run) sees the same sample.
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeSample(n, seed) {
  const rand = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const x = Array.from({ length: n }, () => X_MIN + (X_MAX - X_MIN) * rand()).sort((a, b) => a - b);
  const y = x.map((t) => Math.sin(t) + NOISE * normal());
  // Rounded to float32 so the numbers exposed in demoState are exactly what the engine computes with.
  return { x: x.map(Math.fround), y: y.map(Math.fround) };
}

const sample = makeSample(SAMPLES, SEED);
const gridX = Array.from({ length: GRID }, (_, i) => Math.fround(X_MIN + ((X_MAX - X_MIN) * i) / (GRID - 1)));
const keys = Float32Array.from(sample.x);
const values = Float32Array.from(sample.y);
const queries = Float32Array.from(gridX);
// The fit is a weighted mean of the samples, so it never leaves their range: a fixed y axis keeps the plot still.
const yRange = padRange(Math.min(...sample.y), Math.max(...sample.y), 0.06);

/** @type {Float32Array | null} */
let fit = null;

const bandwidth = () => 10 ** Number(slider.value);

function showBandwidth() {
  const text = bandwidth().toPrecision(3);
  bandwidthOut.value = text;
  slider.setAttribute('aria-valuetext', `h = ${text}`);
}

function update(ka) {
  const kernel = kernelSelect.value;
  const h = bandwidth();
  showBandwidth();
  try {
    const t0 = performance.now();
    fit = ka.attention(queries, keys, values, { dim: 1, kernel, bandwidth: h, empty: 'nearest' });
    const ms = performance.now() - t0;
    timing.classList.remove('error');
    timing.textContent = `${GRID} queries × ${SAMPLES} keys in ${ms < 0.01 ? '< 0.01' : ms.toFixed(2)} ms`;
    window.demoState = {
      ready: true,
      kernel,
      bandwidth: h,
      x: sample.x.slice(),
      y: sample.y.slice(),
      gridX: gridX.slice(),
      fit: Array.from(fit),
      ms,
    };
  } catch (err) {
    fit = null;
    showError(err);
  }
  draw();
}

function showError(err) {
  timing.classList.add('error');
  timing.textContent = `Error: ${err && err.message ? err.message : err}`;
  window.demoState = { ...window.demoState, ready: false, error: String(err) };
  console.error(err);
}

function padRange(lo, hi, fraction) {
  const pad = (hi - lo || 1) * fraction;
  return [lo - pad, hi + pad];
}

// Ticks at 1, 2 or 5 times a power of ten, about `count` of them.
function ticks(lo, hi, count) {
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].find((m) => m * power >= raw) * power;
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    // A true minus sign, and no "-0" from rounding.
    const label = (Math.abs(v) < step * 1e-9 ? 0 : v).toFixed(decimals).replace('-', '\u2212');
    out.push({ value: v, label });
  }
  return out;
}

function draw() {
  const dpr = window.devicePixelRatio || 1;
  const width = canvas.clientWidth;
  const height = canvas.clientHeight;
  if (!width || !height) return;
  const pixelWidth = Math.round(width * dpr);
  const pixelHeight = Math.round(height * dpr);
  if (canvas.width !== pixelWidth || canvas.height !== pixelHeight) {
    canvas.width = pixelWidth;
    canvas.height = pixelHeight;
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);

  // Colours come from CSS so that prefers-color-scheme drives the plot as well as the page.
  const style = getComputedStyle(document.documentElement);
  const color = (name) => style.getPropertyValue(name).trim();
  const pad = { left: 40, right: 12, top: 10, bottom: 28 };
  const [y0, y1] = yRange;
  const sx = (v) => pad.left + ((v - X_MIN) / (X_MAX - X_MIN)) * (width - pad.left - pad.right);
  const sy = (v) => height - pad.bottom - ((v - y0) / (y1 - y0)) * (height - pad.top - pad.bottom);

  ctx.font = '12px system-ui, sans-serif';
  ctx.lineWidth = 1;
  ctx.fillStyle = color('--muted');
  ctx.strokeStyle = color('--grid');

  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const t of ticks(X_MIN, X_MAX, 5)) {
    const px = Math.round(sx(t.value)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(px, pad.top);
    ctx.lineTo(px, height - pad.bottom);
    ctx.stroke();
    ctx.fillText(t.label, px, height - pad.bottom + 6);
  }
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const t of ticks(y0, y1, 4)) {
    const py = Math.round(sy(t.value)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(pad.left, py);
    ctx.lineTo(width - pad.right, py);
    ctx.stroke();
    ctx.fillText(t.label, pad.left - 6, py);
  }

  ctx.strokeStyle = color('--axis');
  ctx.strokeRect(pad.left + 0.5, pad.top + 0.5, width - pad.left - pad.right - 1, height - pad.top - pad.bottom - 1);

  ctx.fillStyle = color('--point');
  for (let j = 0; j < SAMPLES; j++) {
    ctx.beginPath();
    ctx.arc(sx(sample.x[j]), sy(sample.y[j]), 2.5, 0, 2 * Math.PI);
    ctx.fill();
  }

  if (fit) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(pad.left, pad.top, width - pad.left - pad.right, height - pad.top - pad.bottom);
    ctx.clip();
    ctx.strokeStyle = color('--curve');
    ctx.lineWidth = 2;
    ctx.lineJoin = 'round';
    ctx.beginPath();
    let penDown = false;
    for (let i = 0; i < GRID; i++) {
      // A NaN breaks the line rather than drawing to a bogus point.
      if (!Number.isFinite(fit[i])) { penDown = false; continue; }
      if (penDown) ctx.lineTo(sx(gridX[i]), sy(fit[i]));
      else ctx.moveTo(sx(gridX[i]), sy(fit[i]));
      penDown = true;
    }
    ctx.stroke();
    ctx.restore();
  }
}

async function main() {
  showBandwidth();
  draw();
  new ResizeObserver(() => draw()).observe(canvas);
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => draw());

  let ka;
  try {
    ka = await init();
  } catch (err) {
    showError(err);
    return;
  }
  slider.addEventListener('input', () => update(ka));
  kernelSelect.addEventListener('change', () => update(ka));
  // The controls never submit anywhere.
  document.getElementById('controls').addEventListener('submit', (e) => e.preventDefault());
  update(ka);
}

main();
