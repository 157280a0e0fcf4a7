// Kernel regression and attention from Node, after `npm install kernel-attention`:
// `node node_modules/kernel-attention/examples/node.mjs`.
import { init } from 'kernel-attention';

const ka = await init();

// Nadaraya–Watson regression: noisy samples of sin(x) are the keys and values; the queries are new inputs.
const x = Float64Array.from({ length: 50 }, (_, i) => i / 5);
const y = x.map((xi, i) => Math.sin(xi) + 0.1 * Math.cos(7 * i));
const at = [1, 2, 3];
const fit = ka.attention(at, x, y, { dim: 1, kernel: 'gaussian', bandwidth: 0.4 });
console.log('fit:', Array.from(fit, (f) => f.toFixed(3)).join(' '));

// Scaled dot-product attention: 4 tokens, model width 8 split into 2 heads, causal mask.
const tokens = Float32Array.from({ length: 4 * 8 }, (_, i) => Math.sin(i));
const out = ka.attention(tokens, tokens, tokens, { dim: 8, heads: 2, causal: true });
console.log('attention row 0 equals value row 0:', out.slice(0, 8).every((o, d) => Math.abs(o - tokens[d]) < 1e-6));
