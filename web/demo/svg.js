// SVG export: a stand-in canvas whose 2-D context records the calls the plots (plot-*.js) make as SVG elements, so
// each plot is drawn by one piece of code, on screen and into the file. Lines, points, rectangles and text become
// vectors; a raster (the heat maps of the attention matrix and of a 2-D surface) becomes an embedded PNG <image> under
// vector axes.

const SVG = 'http://www.w3.org/2000/svg';
const round = (v) => Math.round(v * 100) / 100;

// `rgba(r, g, b, a)` as a colour and an opacity: SVG 1.1 viewers do not all read rgba().
function paint(kind, color) {
  const m = /^rgba\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*\)$/.exec(color);
  return m ? { [kind]: `rgb(${m[1]},${m[2]},${m[3]})`, [`${kind}-opacity`]: m[4] } : { [kind]: color };
}

let measurer = null;

const ANCHOR = { left: 'start', start: 'start', center: 'middle', right: 'end', end: 'end' };
const BASELINE = {
  top: 'hanging',
  hanging: 'hanging',
  middle: 'central',
  bottom: 'text-after-edge',
  ideographic: 'text-after-edge',
};

/** The subset of CanvasRenderingContext2D that the plots (plot-*.js) use, writing SVG elements into `root`. */
// What save() keeps and restore() puts back, as a canvas context's drawing state.
const SAVED_STATE = [
  'fillStyle',
  'strokeStyle',
  'lineWidth',
  'lineJoin',
  'font',
  'textAlign',
  'textBaseline',
  'imageSmoothingEnabled',
  'm',
  'dash',
  'group',
];

class SvgContext {
  vector = true; // plot-fit.js draws points here directly instead of through its cached raster layer
  fillStyle = '#000';
  strokeStyle = '#000';
  lineWidth = 1;
  lineJoin = 'miter';
  font = '10px sans-serif';
  textAlign = 'start';
  textBaseline = 'alphabetic';
  imageSmoothingEnabled = true;

  constructor(doc, root) {
    Object.assign(this, {
      doc,
      group: root,
      path: [],
      m: [1, 0, 0, 1, 0, 0],
      dash: [],
      stack: [],
      clips: 0,
      rects: null,
    });
  }

  el(name, attributes, parent = this.group) {
    const node = this.doc.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attributes))
      if (value !== null && value !== undefined && value !== '') node.setAttribute(key, value);
    parent.append(node);
    return node;
  }

  // Transforms: the plots use setTransform (device pixels; 1 here), translate and rotate (the y-axis title).
  setTransform(a, b, c, d, e, f) {
    this.m = [a, b, c, d, e, f];
  }
  translate(x, y) {
    const [a, b, c, d, e, f] = this.m;
    this.m = [a, b, c, d, a * x + c * y + e, b * x + d * y + f];
  }
  rotate(t) {
    const [a, b, c, d, e, f] = this.m;
    const cos = Math.cos(t);
    const sin = Math.sin(t);
    this.m = [a * cos + c * sin, b * cos + d * sin, c * cos - a * sin, d * cos - b * sin, e, f];
  }
  pt(x, y) {
    const [a, b, c, d, e, f] = this.m;
    return `${round(a * x + c * y + e)} ${round(b * x + d * y + f)}`;
  }

  save() {
    this.flush();
    this.stack.push(Object.fromEntries(SAVED_STATE.map((key) => [key, this[key]])));
  }
  restore() {
    this.flush();
    Object.assign(this, this.stack.pop());
  }
  setLineDash(dash) {
    this.dash = dash;
  }
  clearRect() {}

  beginPath() {
    this.path = [];
  }
  moveTo(x, y) {
    this.path.push(`M${this.pt(x, y)}`);
  }
  lineTo(x, y) {
    this.path.push(`${this.path.length ? 'L' : 'M'}${this.pt(x, y)}`);
  }
  closePath() {
    this.path.push('Z');
  }
  rect(x, y, w, h) {
    this.path.push(`M${this.pt(x, y)}L${this.pt(x + w, y)}L${this.pt(x + w, y + h)}L${this.pt(x, y + h)}Z`);
  }
  arc(x, y, r, start, end) {
    if (end - start >= 2 * Math.PI - 1e-9) {
      // a circle: two half arcs
      const s = round(r * Math.hypot(this.m[0], this.m[1]));
      this.path.push(
        `M${this.pt(x + r, y)}A${s} ${s} 0 1 0 ${this.pt(x - r, y)}A${s} ${s} 0 1 0 ${this.pt(x + r, y)}Z`,
      );
      return;
    }
    for (let k = 0; k <= 24; k++) {
      const t = start + ((end - start) * k) / 24;
      this.lineTo(x + r * Math.cos(t), y + r * Math.sin(t));
    }
  }

  fill() {
    this.flush();
    this.el('path', { d: this.path.join(''), ...paint('fill', this.fillStyle) });
  }
  stroke() {
    this.flush();
    this.el('path', {
      d: this.path.join(''),
      fill: 'none',
      ...paint('stroke', this.strokeStyle),
      'stroke-width': this.lineWidth,
      'stroke-dasharray': this.dash.join(' '),
      'stroke-linejoin': this.lineJoin === 'miter' ? null : this.lineJoin,
    });
  }
  // Runs of fillRect in one colour (tens of thousands of data points) become one path, not one element each.
  fillRect(x, y, w, h) {
    if (this.rects?.fill !== this.fillStyle) {
      this.flush();
      this.rects = { fill: this.fillStyle, d: [] };
    }
    this.rects.d.push(`M${this.pt(x, y)}h${round(w)}v${round(h)}h${round(-w)}Z`);
  }
  flush() {
    if (!this.rects) return;
    const { fill, d } = this.rects;
    this.rects = null;
    this.el('path', { d: d.join(''), ...paint('fill', fill) });
  }
  strokeRect(x, y, w, h) {
    const path = this.path;
    this.path = [];
    this.rect(x, y, w, h);
    this.stroke();
    this.path = path;
  }
  clip() {
    this.flush();
    const id = `clip${++this.clips}`;
    this.el('path', { d: this.path.join('') }, this.el('clipPath', { id }));
    this.group = this.el('g', { 'clip-path': `url(#${id})` });
  }

  // Text is measured as the screen would draw it, so margins come out the same in the file.
  measureText(text) {
    measurer ??= new OffscreenCanvas(1, 1).getContext('2d');
    measurer.font = this.font;
    return measurer.measureText(text);
  }

  fillText(text, x, y) {
    this.flush();
    const [, size = '12', family = 'sans-serif'] = /([\d.]+)px\s+(.*)/.exec(this.font) ?? [];
    const turned = this.m[1] !== 0 || this.m[2] !== 0;
    const [px, py] = this.pt(x, y).split(' ');
    const node = this.el('text', {
      x: turned ? round(x) : px,
      y: turned ? round(y) : py,
      transform: turned ? `matrix(${this.m.map(round).join(' ')})` : null,
      'font-size': size,
      'font-family': family,
      'text-anchor': ANCHOR[this.textAlign],
      'dominant-baseline': BASELINE[this.textBaseline],
      ...paint('fill', this.fillStyle),
    });
    node.textContent = text; // the visitor's column names are text here too, never markup
  }

  /** A raster source (an OffscreenCanvas) as a PNG data: URL inside the file. */
  drawImage(source, x, y, w, h) {
    this.flush();
    const copy = document.createElement('canvas');
    copy.width = source.width;
    copy.height = source.height;
    copy.getContext('2d').drawImage(source, 0, 0);
    const [px, py] = this.pt(x, y).split(' ');
    this.el('image', {
      x: px,
      y: py,
      width: round(w),
      height: round(h),
      preserveAspectRatio: 'none',
      href: copy.toDataURL('image/png'),
      'image-rendering': this.imageSmoothingEnabled ? null : 'pixelated',
    });
  }
}

/**
 * A stand-in for `canvas` (same CSS size, pixel ratio 1) for the draw functions of the plots (plot-*.js); `.svg()`
 * gives the file's text. The elements live in a separate XML document, which loads nothing (no image is fetched
 * while recording).
 */
export function svgCanvas(
  canvas,
  { title = '', background = '', width = canvas.clientWidth, height = canvas.clientHeight } = {},
) {
  const doc = document.implementation.createDocument(SVG, 'svg', null);
  const root = doc.documentElement;
  for (const [key, value] of Object.entries({ width, height, viewBox: `0 0 ${width} ${height}` }))
    root.setAttribute(key, value);
  const ctx = new SvgContext(doc, root);
  if (title) ctx.el('title', {}).textContent = title;
  if (background) ctx.el('rect', { width, height, fill: background });
  return {
    clientWidth: width,
    clientHeight: height,
    width,
    height,
    pixelRatio: 1,
    getContext: () => ctx,
    svg() {
      ctx.flush();
      return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(doc)}\n`;
    },
  };
}
