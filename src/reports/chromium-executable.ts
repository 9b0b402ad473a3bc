/**
 * Which Chromium renders PDF reports: `FF_CHROMIUM` when set, else the first of the places
 * Debian, Ubuntu and Google's packages install one. Never a downloaded browser: the platform
 * uses what the operator installed (`apt-get install chromium`), so it is patched with the system.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { ReportEngineUnavailable } from '../errors.js';

export const DEFAULT_CHROMIUM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'] as const;

const HOW_TO_INSTALL = "install Debian's chromium package (apt-get install chromium) or set FF_CHROMIUM to a Chromium or Chrome executable; HTML reports work without it";

/** The executable to start, or `ReportEngineUnavailable` saying what is missing and how to fix it. */
export function chromiumExecutable(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.FF_CHROMIUM?.trim();
  if (configured) {
    if (isExecutableFile(configured)) return configured;
    throw new ReportEngineUnavailable(`PDF reports need a headless Chromium, but FF_CHROMIUM is '${configured}', which is not an executable file: ${HOW_TO_INSTALL}`);
  }
  const found = DEFAULT_CHROMIUM_PATHS.find(isExecutableFile);
  if (found) return found;
  throw new ReportEngineUnavailable(`PDF reports need a headless Chromium and none was found (${DEFAULT_CHROMIUM_PATHS.join(', ')}): ${HOW_TO_INSTALL}`);
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
