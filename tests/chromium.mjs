// Debian's Chromium for the browser and package tests, launched headless one way. A missing browser fails the run
// rather than skipping it, or CI would go green without testing anything.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The launched browser (playwright-core); `timeout` in ms for the launch itself (playwright's default: 30 s). */
export function launchChromium({ timeout } = {}) {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: install Debian's chromium (apt-get install chromium, or scripts/setup.sh)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, ...(timeout ? { timeout } : {}) });
}
