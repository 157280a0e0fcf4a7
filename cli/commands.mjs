// The CLI's commands, one module each in commands/: each exports `summary` (its line in the top-level help) and
// `run(argv, api)`, which returns its help text or writes its output (`api`: a function resolving to init()'s API,
// called only once the input has been read and checked); kernel-attention.mjs handles errors and exit codes.
// A new command is a file in commands/ and a line here.
import * as attention from './commands/attention.mjs';
import * as fit from './commands/fit.mjs';
import * as loess from './commands/loess.mjs';
import * as lowess from './commands/lowess.mjs';
import * as predict from './commands/predict.mjs';
import * as selectBandwidth from './commands/select-bandwidth.mjs';

export const COMMANDS = {
  fit,
  predict,
  'select-bandwidth': selectBandwidth,
  lowess,
  loess,
  attention,
};
