// web/src/float-sort.js: the radix sort of the median spacing (warnings.js) against Float64Array's own sort, value for
// value (Object.is: −0 before +0, NaN last), on samples above the size where the radix sort takes over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sortedColumn } from '../../web/src/float-sort.js';

function mulberry(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sameOrder = (got, want) => {
  assert.equal(got.length, want.length);
  for (let i = 0; i < want.length; i++) assert.ok(Object.is(got[i], want[i]), `at ${i}: ${got[i]} against ${want[i]}`);
};

test('sortedColumn orders as Float64Array.prototype.sort, signs, zeros, subnormals, infinities and NaN included', () => {
  const special = [-0, 0, -1e300, 1e300, 5e-324, -5e-324, 1e-310, Infinity, -Infinity, NaN, 1, -1, 0.1, -0.1];
  const rand = mulberry(7);
  const x = Float64Array.from({ length: 9001 }, (_, i) =>
    i % 5 === 0 ? special[i % special.length] : (rand() - 0.5) * 10 ** Math.floor(rand() * 40 - 20),
  );
  sameOrder(sortedColumn(x, x.length, 1, 0), Float64Array.from(x).sort());
});

test('sortedColumn reads column c of a row-major n × dim array and leaves it unchanged', () => {
  const rand = mulberry(3);
  const n = 5000;
  const x = Float64Array.from({ length: n * 3 }, () => Math.round(rand() * 1e4) / 7 - 500); // ties too
  const before = Float64Array.from(x);
  for (let c = 0; c < 3; c++) {
    const column = Float64Array.from({ length: n }, (_, i) => x[i * 3 + c]);
    sameOrder(sortedColumn(x, n, 3, c), column.sort());
  }
  assert.deepEqual(x, before);
  const small = Float64Array.of(3, -0, 0, 1);
  sameOrder(sortedColumn(small, 4, 1, 0), Float64Array.of(-0, 0, 1, 3));
});
