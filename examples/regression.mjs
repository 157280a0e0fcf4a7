// Kernel regression with a chosen bandwidth and a confidence band:
// `node node_modules/kernel-attention/examples/regression.mjs`.
import { init } from 'kernel-attention';

const ka = await init();

// 400 noisy samples of a curve on [0, 1]; the noise has standard deviation 0.2.
let seed = 7;
const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
const truth = (t) => Math.sin(6 * t) + t;
const x = Float64Array.from({ length: 400 }, random);
const y = x.map((t) => truth(t) + 0.2 * Math.sqrt(-2 * Math.log(random())) * Math.cos(2 * Math.PI * random()));

// Local-linear regression; the bandwidth is chosen by leave-one-out cross-validation (the defaults).
const model = ka.kernelRegression(x, y, { dim: 1 });
console.log(`bandwidth ${model.bandwidth[0].toFixed(4)} (CV ${model.selection.score.toFixed(4)} after ` +
  `${model.selection.curve.scores.length} evaluations), ${model.effectiveDegreesOfFreedom.toFixed(1)} degrees of freedom, ` +
  `noise sd ${Math.sqrt(model.residualVariance[0]).toFixed(3)}`);

const grid = [0, 0.25, 0.5, 0.75, 1];
const band = model.predictInterval(grid, { level: 0.95 });
grid.forEach((t, i) => console.log(`x=${t.toFixed(2)}  fit ${band.mean[i].toFixed(3)}  ` +
  `95% band [${band.lower[i].toFixed(3)}, ${band.upper[i].toFixed(3)}]  truth ${truth(t).toFixed(3)}  ` +
  `effective points ${band.effectiveKeys[i].toFixed(0)}`));
model.dispose();
