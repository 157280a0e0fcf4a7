// A minimal SVG line chart on log–log axes, for the generated benchmark pages (no plotting dependency): one polyline
// with markers per series, decade ticks and grid lines, a legend. Text is escaped; numbers are rounded to 0.1 px.

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#17becf'];
const escape = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const px = (x) => Math.round(x * 10) / 10;

/** 10^k as a tick label: 1, 10, 100, 1000, then 1e4 …; 0.1, 0.01, 1e-3 … */
function decade(k) {
  if (k >= 0 && k <= 3) return String(10 ** k);
  if (k < 0 && k >= -2) return (10 ** k).toFixed(-k);
  return `1e${k}`;
}

/**
 * One log–log panel as SVG elements, drawn in the box (left, top, width, height). `series`: [{ name, points: [[x, y],
 * …], dashed? }] (points with x or y ≤ 0 or not finite are left out; a dashed series has no markers); `colour(name)` picks the stroke. The legend is a row
 * under the x axis's label.
 */
function panel({ title, xLabel, yLabel, series, colour }, left, top, width, height) {
  const points = series
    .flatMap((s) => s.points)
    .filter(([x, y]) => x > 0 && y > 0 && Number.isFinite(x) && Number.isFinite(y));
  if (!points.length) return [`<text x="${left}" y="${top + 20}">${escape(title)}: no data</text>`];
  const span = (values) => {
    let lo = Math.floor(Math.log10(Math.min(...values)));
    let hi = Math.ceil(Math.log10(Math.max(...values)));
    if (hi === lo) hi += 1;
    return [lo, hi];
  };
  const [x0, x1] = span(points.map((p) => p[0]));
  const [y0, y1] = span(points.map((p) => p[1]));
  const X = (x) => left + ((Math.log10(x) - x0) / (x1 - x0)) * width;
  const Y = (y) => top + height - ((Math.log10(y) - y0) / (y1 - y0)) * height;
  const out = [
    `<text x="${px(left + width / 2)}" y="${px(top - 10)}" text-anchor="middle" font-weight="bold">${escape(title)}</text>`,
    `<rect x="${left}" y="${top}" width="${width}" height="${height}" fill="none" stroke="#444"/>`,
  ];
  for (let k = x0; k <= x1; k++) {
    const x = px(X(10 ** k));
    out.push(
      `<line x1="${x}" y1="${top}" x2="${x}" y2="${top + height}" stroke="#ddd"/>`,
      `<text x="${x}" y="${top + height + 16}" text-anchor="middle">${decade(k)}</text>`,
    );
  }
  for (let k = y0; k <= y1; k++) {
    const y = px(Y(10 ** k));
    out.push(
      `<line x1="${left}" y1="${y}" x2="${left + width}" y2="${y}" stroke="#ddd"/>`,
      `<text x="${left - 6}" y="${px(y + 4)}" text-anchor="end">${decade(k)}</text>`,
    );
  }
  out.push(
    `<text x="${px(left + width / 2)}" y="${top + height + 36}" text-anchor="middle">${escape(xLabel)}</text>`,
    `<text transform="translate(${left - 48} ${px(top + height / 2)}) rotate(-90)" text-anchor="middle">${escape(yLabel)}</text>`,
  );
  const drawn = series.filter((s) =>
    s.points.some(([x, y]) => x > 0 && y > 0 && Number.isFinite(x) && Number.isFinite(y)),
  );
  for (const s of drawn) {
    const shown = s.points.filter(([x, y]) => x > 0 && y > 0 && Number.isFinite(x) && Number.isFinite(y));
    const c = colour(s.name);
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    out.push(
      `<polyline points="${shown.map(([x, y]) => `${px(X(x))},${px(Y(y))}`).join(' ')}" fill="none" stroke="${c}" stroke-width="2"${dash}/>`,
      ...(s.dashed ? [] : shown.map(([x, y]) => `<circle cx="${px(X(x))}" cy="${px(Y(y))}" r="3" fill="${c}"/>`)),
    );
  }
  // The legend: one row under the axis label (about 7 px per character).
  let lx = left;
  for (const s of drawn) {
    const ly = top + height + 58;
    out.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 20}" y2="${ly - 4}" stroke="${colour(s.name)}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      `<text x="${lx + 26}" y="${ly}">${escape(s.name)}</text>`,
    );
    lx += 40 + 7 * s.name.length;
  }
  return out;
}

/**
 * An SVG document of one or more log–log panels side by side: `panels` is [{ title, xLabel, yLabel, series }]. A
 * series name gets the colour of its place in `names` (then of its first appearance), the same in every panel.
 */
export function logLogChart(panels, { width = 460, height = 320, names: order = [] } = {}) {
  const names = [...new Set([...order, ...panels.flatMap((p) => p.series.map((s) => s.name))])];
  const colour = (name) => COLOURS[names.indexOf(name) % COLOURS.length];
  const margin = { left: 70, right: 20, top: 34, bottom: 70 };
  const cell = width + margin.left + margin.right;
  const total = { w: cell * panels.length, h: height + margin.top + margin.bottom };
  const body = panels.flatMap((p, n) => panel({ ...p, colour }, n * cell + margin.left, margin.top, width, height));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${total.w}" height="${total.h}" viewBox="0 0 ${total.w} ${total.h}" ` +
      'font-family="sans-serif" font-size="12">',
    `<rect width="${total.w}" height="${total.h}" fill="#fff"/>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
