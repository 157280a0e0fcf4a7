// What the visitor downloads: the fit as CSV (on the grid, and at the observations, computed by the worker), and each
// plot as an opaque, titled PNG or SVG figure with its legend and parameters and without hover marks.
import { paintPlot } from './drawing.js';
import { download, fitCsv, observationsCsv, spread } from './export.js';
import { figure } from './figure.js';
import { hText } from './describe.js';
import { estimatorName, kernelName, loessSettings, lowessSettings } from './settings.js';
import { state, subscribe, THIN } from './state.js';
import { clearError, showError, ui } from './ui.js';
import { compute } from './workers.js';

export function saveFit() {
  const { fit, data } = state;
  if (!fit) return;
  download(
    new Blob([fitCsv(fit, data.names, ui.band.checked && fit.dim === 1 && !fit.lowess, data.axes, spread(data.y))], {
      type: 'text/csv',
    }),
    'kernel-fit.csv',
  );
}

/** The fit, residuals and (when shown) band at every observation, computed by the worker at the fit's settings. */
export async function saveObservations() {
  const { fit, data } = state;
  if (!fit || fit.draft) return;
  ui.saveStatus.textContent = 'Computing the fit at the observations…';
  clearError(ui.saveStatus);
  try {
    const at = await compute('observations', {
      h: Array.from(fit.h),
      lambda: fit.lambda ?? null,
      kernel: fit.kernel,
      estimator: fit.estimator,
      level: fit.level,
      method: ui.fitMethod.value,
      ...(fit.lowess ? { frac: fit.frac, iterations: fit.iterations } : lowessSettings()),
      ...(fit.loess ? { loessSpan: fit.loessSpan, degree: fit.degree, family: fit.family } : loessSettings()),
      robust: fit.robust?.iterations ?? 0,
      variance: fit.variance ?? 'global',
      span: fit.spanBandwidth?.f ?? 0,
    });
    if (state.data !== data) return;
    download(
      new Blob([observationsCsv(data, at, ui.band.checked && data.dim === 1 && !fit.lowess)], { type: 'text/csv' }),
      'kernel-fit-observations.csv',
    );
    ui.saveStatus.textContent = '';
  } catch (err) {
    showError(ui.saveStatus, `Not saved: ${err.message}.`);
  }
}

/** A refusal to save belongs to the fit it was asked for: the next fit or data takes it away. */
function forgetRefusal() {
  if (!ui.saveStatus.classList.contains('error')) return;
  clearError(ui.saveStatus);
  ui.saveStatus.textContent = '';
}
subscribe('fit', (fit) => {
  if (!fit.draft) forgetRefusal();
});
subscribe('data', forgetRefusal);

const PLOT_FILES = {
  plot: 'kernel-fit',
  matrix: 'attention-matrix',
  selection: 'bandwidth-selection',
  slope: 'kernel-fit-derivative',
};

/** What an exported figure says about the fit: estimator, kernel, h, method (and how h was set), the level. */
function figureParams() {
  const { fit } = state;
  if (!fit) return '';
  if (fit.lowess) {
    return (
      `LOWESS (as R's lowess()), span f = ${fit.frac.toFixed(2)}, ${fit.iterations} robustness iteration${fit.iterations === 1 ? '' : 's'}, ` +
      `${fit.n.toLocaleString('en')} points, no band`
    );
  }
  if (fit.loess) {
    return (
      `loess (as R's loess()), span ${fit.loessSpan.toFixed(2)}, degree ${fit.degree}, ${fit.family} family, ` +
      `${fit.n.toLocaleString('en')} points, enp ${fit.enp.toFixed(2)}, residual standard error ` +
      `${fit.residualScale.toPrecision(4)}` +
      (fit.dim === 1 && ui.band.checked ? `, ${Math.round(fit.level * 100)} % band (R's se)` : '')
    );
  }
  const blocked = state.hSource?.by === 'cv' && state.hSource.exclude > 0;
  const cv = blocked
    ? `chosen by blocked CV (±${hText([state.hSource.exclude], state.data.axes)} left out)`
    : 'chosen by leave-one-out CV';
  const how =
    {
      cv,
      aicc: 'chosen by AICc',
      scott: "Scott's rule",
      silverman: "Silverman's rule",
      learn: 'learnt by gradient descent',
      hand: 'set by hand',
      link: 'from a link',
    }[state.hSource?.by] ?? '';
  const bandwidth = fit.spanBandwidth
    ? `nearest-neighbour span f = ${fit.spanBandwidth.f.toFixed(2)} (${fit.spanBandwidth.k.toLocaleString('en')} ` +
      `nearest points; median h = ${hText(fit.h, state.data.axes)})`
    : `h = ${hText(fit.h, state.data.axes)}${fit.curves ? ` and λ = ${fit.lambda.toPrecision(3)} for “${fit.category}”` : ''}` +
      `${how ? ` (${how})` : ''}`;
  return (
    `${estimatorName(fit.estimator)}, ${kernelName(fit.kernel)} kernel, ${bandwidth}` +
    `, method ${fit.method}, ${fit.n.toLocaleString('en')} points` +
    (fit.robust ? `, robust (${fit.robust.iterations} bisquare rounds)` : '') +
    (fit.dim === 1 && ui.band.checked
      ? `, ${Math.round(fit.level * 100)} % band (${fit.variance === 'local' ? 'local σ(x)' : 'global σ'})`
      : '')
  );
}

/** Saves one plot as PNG or SVG: an opaque figure with title, parameters and legend, without hover marks. */
export async function savePlot(name, format) {
  const canvas = ui[name];
  const style = getComputedStyle(document.documentElement);
  const color = (v) => style.getPropertyValue(v).trim();
  const { data } = state;
  if (!data) return;
  const subject =
    `${data.names[data.dim]} on ${data.names.slice(0, data.dim).join(' and ')}` +
    (data.category ? ` by ${data.category.name}` : '');
  const lowess = Boolean(state.fit?.lowess);
  const loess = Boolean(state.fit?.loess);
  const titles = {
    plot: `${lowess ? 'LOWESS smooth' : loess ? 'loess fit' : 'Kernel regression'} of ${subject}`,
    matrix: `Attention weights of the fit of ${subject}`,
    selection: `Choosing h for the fit of ${subject}`,
    slope: `Derivative of the fit of ${subject}`,
  };
  let legend = [];
  if (name === 'plot' && data.dim === 1) {
    legend = [
      { kind: 'point', color: color('--point'), label: 'data' },
      { kind: 'line', color: color('--curve'), label: 'fit' },
    ];
    if (state.fit?.curves) {
      // One line per level, in its colour (plot-categories.js), for the one fit line.
      const levels = state.fit.curves.map((c, k) => ({
        kind: 'line',
        color: color(`--level-${k % 6}`),
        label: `${state.fit.category}: ${c.label}`,
      }));
      legend.splice(1, 1, ...levels);
      legend[0].label = 'data (in its level’s colour)';
    }
    if (lowess) {
      legend[1].label = 'LOWESS fit (no band)';
      legend.push({ kind: 'ring', color: color('--accent'), label: 'robustness weight < ½' });
    } else if (ui.band.checked && !state.fit?.curves) {
      const label = loess ? "confidence band (R's se)" : 'confidence band';
      legend.push({ kind: 'band', color: color('--band'), edge: color('--band-edge'), label });
    }
    if (loess) legend[1].label = 'loess fit';
    if (!lowess && !loess)
      legend.push({ kind: 'bar', color: color('--thin'), label: `thin support (< ${THIN} effective points)` });
    if (!lowess && state.fit?.robust)
      legend.push({ kind: 'ring', color: color('--accent'), label: 'robustness weight < ½' });
  }
  const spec = {
    title: `${titles[name]} (${data.source})`,
    description: canvas.getAttribute('aria-label'),
    params: figureParams(),
    legend,
    colors: { bg: color('--bg'), fg: color('--fg'), muted: color('--muted') },
  };
  const blob = await figure(canvas, format, spec, (target) => paintPlot(name, target, {}, { hover: false }));
  download(blob, `${PLOT_FILES[name]}.${format}`);
}
