// Dive into Deep Learning's parametric Nadaraya–Watson regression (attention pooling with a learned Gaussian width),
// trained by attentionPooling(): `node node_modules/kernel-attention/examples/attention-pooling.mjs`. Each training
// point is a query whose keys are the other training points (leave-one-out); the loss is the mean squared error; Adam
// learns the log-bandwidth (the book learns w = 1/h by SGD; the log keeps h positive, and Adam's steps do not depend on
// the gradient's scale).
// In a page, `import('./attention-pooling.mjs')` runs the same training and gives its `losses` and `bandwidth`.
import { init } from '../web/src/index.js';

const ka = await init();

// Seeded data as in the book: 50 sorted points x ~ U(0, 5), y = 2 sin x + x^0.8 + noise ~ N(0, 0.5²).
function mulberry32(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = mulberry32(42);
const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
const n = 50;
const x = Float64Array.from({ length: n }, () => 5 * random()).sort();
const y = x.map((t) => 2 * Math.sin(t) + t ** 0.8 + 0.5 * normal());

// A deliberately poor start: width 5 (the book's w = 1/h = 0.2) averages nearly every point into one constant.
const pooling = ka.attentionPooling({ dim: 1, kernel: 'gaussian', bandwidth: 5, learningRate: 0.1 });
export const losses = [];
for (let epoch = 1; epoch <= 30; epoch++) {
  const fit = pooling.forward(x, x, y, { mask: 'loo' });
  losses.push(fit.reduce((sum, f, i) => sum + (f - y[i]) ** 2, 0) / n);
  pooling.backward(fit.map((f, i) => (2 * (f - y[i])) / n));  // dLoss/dfit of the mean squared error
  pooling.step();
  console.log(`epoch ${epoch}, loss ${losses.at(-1).toFixed(4)}`);
}
export const bandwidth = pooling.parameters.bandwidth[0];
console.log(`learned bandwidth ${bandwidth.toFixed(4)} (w = 1/h = ${(1 / bandwidth).toFixed(3)}); ` +
  `loss ${losses[0].toFixed(4)} → ${losses.at(-1).toFixed(4)}`);
pooling.dispose();
