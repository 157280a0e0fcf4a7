// Regression on a continuous column and a category:
// `node node_modules/kernel-attention/examples/mixed.mjs`.
import { init } from 'kernel-attention';

const ka = await init();

// Weights of chicks on three diets over 21 days: x rows are [day, diet], the diet a label.
let seed = 11;
const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
const diets = [
  { name: 'A', gain: 150 }, // grams gained by day 28, logistic growth
  { name: 'B', gain: 200 },
  { name: 'C', gain: 250 },
];
const x = [];
const y = [];
for (const { name, gain } of diets)
  for (let chick = 0; chick < 15; chick++)
    for (let day = 0; day <= 21; day += 3) {
      x.push(day, name);
      y.push(40 + gain / (1 + Math.exp((12 - day) / 4)) + 15 * (random() - 0.5));
    }

// The day is continuous, the diet unordered (labels coded A 0, B 1, C 2); CV chooses h for the day and λ for the diet:
// λ = 0 fits each diet apart, λ = 2/3 pools them all.
const model = ka.kernelRegression(x, y, { dim: 2, types: ['continuous', 'unordered'] });
const [h, lambda] = model.bandwidth;
console.log(`bandwidth: day ${h.toFixed(2)}, diet λ ${lambda.toFixed(4)} (CV ${model.selection.score.toFixed(1)})`);
for (const { name } of diets) {
  const fit = model.predict([0, name, 10, name, 21, name]);
  const slope = model.gradient([10, name]).gradient[0]; // along the day; the diet has none (NaN)
  console.log(`diet ${name}: day 0 ${fit[0].toFixed(1)} g, day 10 ${fit[1].toFixed(1)} g, day 21 ${fit[2].toFixed(1)} g, ` +
    `${slope.toFixed(2)} g a day at day 10`);
}
model.dispose();
