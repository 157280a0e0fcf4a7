// Loaded under `default-src 'self'; script-src 'self' 'wasm-unsafe-eval'`: no inline script, no eval.
import { init } from '../../../web/src/index.js';

const violations = [];
document.addEventListener('securitypolicyviolation', (e) => violations.push(`${e.violatedDirective}: ${e.blockedURI}`));
try {
  const ka = await init();
  const fit = ka.attention([0.5], [0, 1], [2, 4], { dim: 1, kernel: 'gaussian', bandwidth: 0.5 });
  window.result = { fit: Array.from(fit), violations };
} catch (error) {
  window.result = { error: String(error), violations };
}
document.getElementById('out').textContent = JSON.stringify(window.result);
