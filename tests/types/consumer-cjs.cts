// A CommonJS consumer of the published types: `require('kernel-attention')` resolves to web/types/index.d.cts
// through the "require" condition of "exports". `tsc -p tests/types` must pass, and each @ts-expect-error line must
// really be an error.
import ka = require('kernel-attention');
import type {
  AttentionPooling,
  KernelAttention,
  KernelAttentionError,
  KernelRegressionModel,
  Progress,
} from 'kernel-attention';

async function main(): Promise<void> {
  const api: KernelAttention = await ka.init({ threads: 1 });
  const out: Float32Array = api.attention([0, 1], [0, 1], Float32Array.of(1, 2), {
    dim: 1,
    kernel: 'gaussian',
    bandwidth: 0.5,
  });
  const controller = new AbortController();
  const seen: Progress[] = [];
  const fit: Float32Array = await api.attentionAsync(out, out, out, {
    dim: 1,
    signal: controller.signal,
    onProgress: (p) => seen.push(p),
  });
  const model: KernelRegressionModel = await api.kernelRegressionAsync([0, 1, 2], [1, 2, 3], {
    dim: 1,
    onProgress: ({ done, total }) => done / total,
  });
  const again: Float64Array = await model.predictAsync([0.5], { signal: controller.signal });
  model.dispose();
  const pooling: AttentionPooling = api.attentionPooling({ dim: 1, bandwidth: 5, learningRate: 0.1 });
  pooling.backward(pooling.forward([0, 1, 2], [0, 1, 2], [1, 2, 3], { mask: 'loo' }));
  pooling.step();
  pooling.dispose();
  try {
    api.attention([0], [0], [1], { dim: 2 });
  } catch (error) {
    const e = error as KernelAttentionError;
    const code: string = e.code;
    console.log(code, fit.length, again.length, seen.length);
  }

  // @ts-expect-error: the CommonJS entry has no error class at run time, so none is declared as a value
  console.log(ka.KernelAttentionError);
  // @ts-expect-error: init takes an options object
  await ka.init(2);
  // @ts-expect-error: signal must be an AbortSignal
  await api.attentionAsync(out, out, out, { dim: 1, signal: 'stop' });
  // @ts-expect-error: onProgress receives { done, total }, not a number
  await api.selectBandwidthAsync(out, out, { dim: 1, onProgress: (fraction: number) => fraction });
  // @ts-expect-error: the synchronous attention() takes no signal
  api.attention(out, out, out, { dim: 1, signal: controller.signal });
}
void main;
