// A robust kernelRegression model: Cleveland's bisquare reweighting (robust.js) on the bandwidth already chosen, each
// step a model fitted and predicted at its own sample. The models are made by the `build` function the caller
// passes (model.js's buildModel), so that this file needs no import of it.
import { robustSteps } from './robust.js';
import { ownCopy } from './sample.js';

/**
 * `p` refitted with Cleveland's bisquare robustness weights (robust.js) when options.robust asks for them, on the
 * bandwidth already chosen (a search is not rerun on the reweighted data), as a generator for drive(): every step is
 * a model build(p′) at the final bandwidth, predicted at its own sample. Returns `p` with the final weights
 * (observation weight × robustness weight) in its data copy and `robustnessWeights` (n, input order).
 */
export function* robustFit(p, build) {
  if (!p.robust) return p;
  const { n, dim, width, sample } = p;
  const reweighted = (weights) => ({
    ...p,
    fitWeights: weights,
    // The continuous columns and the levels (mixed data) as the model keeps them; sample.x is the caller's layout.
    data: ownCopy(p.columns.x, sample.y, weights, n, dim, width, p.sorted, p.frame, p.columns.codes),
  });
  // A point the fit cannot reach (compact kernel, its own weight 0) gets NaN, not the empty policy's value or error.
  const fit = (weights) => {
    const model = build({ ...reweighted(weights), empty: 'nan' });
    try {
      return model.predict(sample.x);
    } finally {
      model.dispose();
    }
  };
  const r = yield* robustSteps(fit, sample.y, p.fitWeights, p.robust.iterations);
  // observationWeights: the weights before robustness, for a refit at another bandwidth (withBandwidth).
  return { ...reweighted(r.weights), robustnessWeights: r.robustnessWeights, observationWeights: p.fitWeights };
}
