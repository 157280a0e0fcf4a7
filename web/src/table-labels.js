// The labels of a text column, coded as they are read, so that a column of words (a diet, a region, a supplement)
// can be a category: each distinct label (trimmed) gets the next code. A column with more than MAX_LEVELS distinct
// labels is no category (names, free text): its codes are dropped, and it keeps only its count.

export const MAX_LEVELS = 50;

export class LabelCodes {
  constructor() {
    this.index = new Map(); // label → code, in the order first seen
    this.codes = new Int32Array(256);
    this.length = 0;
    this.tooMany = false;
  }

  /** The next row's cell: a label, or null for a missing one (code −1). */
  push(label) {
    if (this.tooMany) return;
    let code = -1;
    if (label !== null) {
      code = this.index.get(label);
      if (code === undefined) {
        if (this.index.size === MAX_LEVELS) {
          this.tooMany = true;
          this.codes = null;
          return;
        }
        code = this.index.size;
        this.index.set(label, code);
      }
    }
    if (this.length === this.codes.length) {
      const next = new Int32Array(this.codes.length * 2);
      next.set(this.codes);
      this.codes = next;
    }
    this.codes[this.length++] = code;
  }

  /** `{ labels, codes }` (labels in the order first seen, codes per row, −1 missing), or null past MAX_LEVELS. */
  result() {
    return this.tooMany ? null : { labels: [...this.index.keys()], codes: this.codes.slice(0, this.length) };
  }
}
