// A kernelRegression model's derivatives: ∂f/∂x at the queries (local_rows.h), with their standard errors: a grid
// model's from its grid's moments where the grid serves the row (grid/gradient.h), every other row exactly (a grid
// model's over its sorted sample, the keys in each query's reach).
import { checkResult, KernelAttentionError } from './errors.js';
import { tooLarge } from './heap.js';
import { numericArray, rowsOf } from './validate.js';

/**
 * ∂f/∂x at xq for the model whose fits are `m` (model-fit.js), with σ² Σℓ'² as the squared standard error: { gradient,
 * stderr } (both I × dim × width, [(i·dim + d)·width + c]) and, for span models, each query's bandwidths.
 */
export function modelGradient(m, xq) {
  m.live();
  const { engine, kernel, dim, width, n, frame } = m;
  if (!engine.kernel(kernel).gradient) {
    throw new KernelAttentionError(
      'BadArgument',
      `the '${kernel}' kernel has no derivative (it is flat inside its support): fit with another kernel for gradient()`,
      'kernel',
    );
  }
  xq = numericArray(xq, 'xq');
  const I = rowsOf(xq, dim, 'xq', 'options.dim');
  tooLarge(I * dim * width, 'gradient()', 'xq', 'I·dim·D');
  return engine.withHeap((heap) => {
    const q = heap.f32Shifted(xq, dim, frame.x);
    const scales = m.span === null ? 0 : m.queryScales(heap, m.xr, q, I);
    const gradient = heap.alloc(Math.max(I * dim * width, 1) * 8);
    const sumSq = heap.alloc(Math.max(I * dim, 1) * 8);
    const options = m.options32(heap, { tolerance: 0, queryScale: scales });
    const call = { x: m.xr, y: m.yr, q, n, I, dim, width, options, gradient, sumSq };
    // A grid model serves the derivative from its grid's moments where that serves the row, and the others exactly
    // over its sample sorted once (each query reads the keys in its reach).
    checkResult(
      m.fit.nodes && !scales
        ? engine.gridModelGradient({ ...call, model: m.gridModel(), nodes: m.fit.nodes })
        : engine.localGradient(call),
    );
    const out = heap.readF64(gradient, I * dim * width);
    const squares = heap.readF64(sumSq, I * dim);
    const sigma2 = m.summarize().sigma2;
    const stderr = new Float64Array(I * dim * width);
    for (let at = 0; at < stderr.length; at++)
      stderr[at] = Math.sqrt(sigma2[at % width] * squares[Math.floor(at / width)]);
    const result = { gradient: out, stderr };
    if (scales) result.bandwidths = m.spanBandwidths(heap.readF64(scales, I));
    return result;
  });
}
