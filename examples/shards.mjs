// Sharding keys: each shard's partial state can be computed anywhere (a Worker, another process), then merged.
import { init } from 'kernel-attention';

const ka = await init();

const x = Float32Array.from({ length: 1000 }, (_, i) => i / 1000);
const y = x.map((xi) => Math.sin(6 * xi));
const at = [0.25, 0.5, 0.75];

// Two shards of the keys (in practice: two workers); their states are plain typed arrays, safe to postMessage.
const state = (keys, values) => ka.attentionState(at, keys, values, { dim: 1, kernel: 'gaussian', bandwidth: 0.05 });
const left = state(x.subarray(0, 600), y.subarray(0, 600));
const right = state(x.subarray(600), y.subarray(600));
const merged = ka.finalizeState(ka.mergeStates(left, right));

const direct = ka.attention(at, x, y, { dim: 1, kernel: 'gaussian', bandwidth: 0.05 });
console.log('merged:', Array.from(merged, (v) => v.toFixed(5)).join(' '));
console.log('direct:', Array.from(direct, (v) => v.toFixed(5)).join(' '));
