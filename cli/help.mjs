// The help text the commands share: how a table is read, the sample's flags, the output flags.
import { KERNELS, RULES } from './regression-options.mjs';
import { TYPES_HELP } from './types.mjs';

// The reader's flags (web/src/table.js), for every command that reads a table.
export const READING_HELP = `  --missing M         skip (drop rows with an empty, NA or NaN cell in the columns used) or error (default)
  --delimiter D       the field separator: one character, tab or whitespace (default: detected among comma,
                      tab, semicolon, bar and whitespace)
  --decimal M         the decimal mark, . or , (default: detected; a file where it is unclear is refused)
  --encoding E        utf-8, latin1, utf-16le or utf-16be (default: detected from the bytes)
  --date-order O      day-first or month-first, for dates like 03/04/1958 (default: detected, else day-first)
  --no-header         the first row is data (default: it is a header when a cell is text above values)`;

export const SAMPLE_HELP = `
  --x COLS            the input column(s): names from the header or 1-based indices, comma-separated
  --y COLS            the output column(s), likewise
  --kernel K          ${KERNELS.join(', ')} (default gaussian)
  --estimator E       local-linear (default, R's degree 1), nadaraya-watson (0) or local-quadratic (2)
  --bandwidth H       a number, one per x column (comma-separated), or a rule: ${RULES.join(', ')} (default cv)
  --exclude R         cv only: blocked CV for serial data, each held-out row fitted without the rows within R of it
                      along the first x column (in its units; seconds for dates); default 0, leave-one-out
  --span F            instead of --bandwidth: a nearest-neighbour span F > 0, as R's loess span (each point's
                      bandwidth reaches its ⌊F·n⌋-th nearest point, at least the estimator's columns + 1; above 1
                      every point, the radius grown by √F; several x columns scaled by their trimmed standard
                      deviations)
${TYPES_HELP}
${READING_HELP}`;

export const READING_NOTE = `FILE may be - for stdin. Lines starting with # are skipped. Digit groups (1,234.5), U+2212 minus, and dates or times
(1958-03-29, 1958-03-29T12:00, 29/03/1958, 19-Sep-03, Mar 1958, 12:30) are read; a date column used as --x is fitted
in seconds (the bandwidth is in seconds) and printed as ISO 8601.`;

export const OUTPUT_HELP = `
  --format F          csv or json (default: json when --output ends in .json, else csv)
  --output FILE       write there instead of to stdout (- is stdout)
  -q, --quiet         no progress bar (one is drawn on stderr when it is a terminal)
  -h, --help          this help`;

export const ROBUST_HELP = `  --robust [N]        N bisquare robustness iterations after the fit, as LOWESS's (default N: 3; one --y column)`;
