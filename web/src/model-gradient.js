// A kernelRegression model's derivatives: ∂f/∂x at the queries (local_rows.h), with their standard errors: a grid
// model's from its grid's moments where the grid serves the row (grid/gradient.h), every other row exactly (a grid
// model's over its sorted sample, the keys in each query's reach). A discrete column (mixed data) has no derivative:
// its entries are NaN.
import { checkResult, KernelAttentionError } from './errors.js';
import { tooLarge } from './heap.js';

/**
 * ∂f/∂x at xq for the model whose fits are `m` (model-fit.js), with σ² Σℓ'² as the squared standard error: { gradient,
 * stderr } (both I × dim × width, [(i·dim + d)·width + c], dim the columns of x: NaN for a discrete column) and, for
 * span models, each query's bandwidths.
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
  const queries = m.queries(xq);
  const { I } = queries;
  tooLarge(I * m.userDim * width, 'gradient()', 'xq', 'I·dim·D');
  return engine.withHeap((heap) => {
    const q = heap.f32Shifted(queries.x, dim, frame.x);
    const scales = m.span === null ? 0 : m.queryScales(heap, m.xr, q, I);
    const gradient = heap.alloc(Math.max(I * dim * width, 1) * 8);
    const sumSq = heap.alloc(Math.max(I * dim, 1) * 8);
    const codes = queries.codes ? heap.i32(queries.codes) : 0;
    const options = m.options32(heap, { tolerance: 0, queryScale: scales, queryCategories: codes });
    const call = { x: m.xr, y: m.yr, q, n, I, dim, width, options, gradient, sumSq };
    // A grid model serves the derivative from its grid's moments where that serves the row, and the others exactly
    // over its sample sorted once (each query reads the keys in its reach).
    checkResult(
      m.fit.onGridModel && !scales
        ? engine.gridModelGradient({ ...call, model: m.gridModel(), nodes: m.fit.nodes })
        : engine.localGradient(call),
    );
    const out = heap.readF64(gradient, I * dim * width);
    const squares = heap.readF64(sumSq, I * dim);
    const sigma2 = m.summarize().sigma2;
    const stderr = new Float64Array(I * dim * width);
    for (let at = 0; at < stderr.length; at++)
      stderr[at] = Math.sqrt(sigma2[at % width] * squares[Math.floor(at / width)]);
    const result = m.mixed ? userColumns(m, out, stderr, I) : { gradient: out, stderr };
    if (scales) result.bandwidths = m.spanBandwidths(heap.readF64(scales, I));
    return result;
  });
}

/** Mixed data: the continuous columns' derivatives in the user's column layout, NaN for each discrete column. */
function userColumns({ mixed, dim, width }, gradient, stderr, I) {
  const spread = (a) => {
    const out = new Float64Array(I * mixed.dim * width).fill(NaN);
    for (let i = 0; i < I; i++) {
      mixed.continuous.forEach((d, k) => {
        for (let c = 0; c < width; c++) out[(i * mixed.dim + d) * width + c] = a[(i * dim + k) * width + c];
      });
    }
    return out;
  };
  return { gradient: spread(gradient), stderr: spread(stderr) };
}
