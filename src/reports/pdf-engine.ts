/**
 * HTML → PDF through headless Chromium (`playwright-core` driving the system's browser, see
 * `chromium-executable.ts`). Starting Chromium costs about half a second, so a platform starts one
 * browser on its first PDF and keeps it; documents are printed by a small pool of pages, each in
 * its own browser context, reused from one document to the next (a page is a few milliseconds to
 * reuse, tens to create). A browser that crashes or is killed is noticed and started again on the
 * next PDF; `close()` (from `Platform.close`) ends it.
 *
 * A report page loads nothing from anywhere: JavaScript is off (a template's `| raw` output cannot
 * run code) and every request the page would make — another host, a `file:` URL — is aborted, so
 * a document neither leaks what it shows nor depends on the network. Images and fonts a template
 * needs go inline (`data:` URLs, which are not requests) or come from the system's fonts.
 *
 * Page size and margins are the template's: CSS `@page { size: A4; margin: 15mm }` (A4 without
 * margins when it says nothing).
 */
import { availableParallelism } from 'node:os';
// Types only: Playwright takes over half a second to load, paid on the first PDF, not at every start.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumExecutable } from './chromium-executable.js';
import { ReportEngineUnavailable } from '../errors.js';

/**
 * Flags of a server-side, print-only Chromium: no sandbox (containers run it as root), no GPU,
 * nothing phoning home. The proxy is an address no connection can reach, loopback included: an
 * aborted request is never sent, but Chromium opens a TCP connection ahead of a frame's
 * navigation before any interception sees it — through this proxy it opens none (and resolves no
 * host name either).
 */
export const CHROMIUM_FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage', '--no-first-run', '--mute-audio',
  '--proxy-server=http://255.255.255.255:1', '--proxy-bypass-list=<-loopback>',
] as const;

/** Longest one document may take to lay out and print, milliseconds. */
const PRINT_TIMEOUT_MS = 60_000;
const LAUNCH_TIMEOUT_MS = 30_000;

export interface PdfEngineOptions {
  /** The browser to start; default `FF_CHROMIUM` or the first system Chromium (`chromium-executable.ts`). */
  readonly executable?: string;
  /** Documents printed at once (pooled pages); default the number of cores, between 2 and 8. */
  readonly pages?: number;
}

interface PooledPage {
  readonly context: BrowserContext;
  readonly page: Page;
  /** The browser it belongs to (`#generation` when it was opened): pages of a lost browser are not counted. */
  readonly generation: number;
}

export class PdfEngine {
  readonly #options: PdfEngineOptions;
  #browser: Promise<Browser> | null = null;
  #idle: PooledPage[] = [];
  #open = 0;
  #generation = 0;
  readonly #waiting: (() => void)[] = [];
  /** Browsers started so far (tests and the benchmark check that it stays one). */
  launches = 0;

  constructor(options: PdfEngineOptions = {}) {
    this.#options = options;
  }

  get poolSize(): number {
    return this.#options.pages ?? Math.max(2, Math.min(8, availableParallelism()));
  }

  /**
   * Throws `ReportEngineUnavailable` when no browser could be started: checked before work whose
   * effects would be wasted (a method's writes are rolled back rather than committed for a report
   * that cannot be printed).
   */
  assertAvailable(): void {
    this.#executable();
  }

  /** One PDF of `html`, as the bytes of the file. */
  async print(html: string): Promise<Buffer> {
    const pooled = await this.#acquire();
    let reusable = false;
    try {
      await pooled.page.setContent(html, { waitUntil: 'load', timeout: PRINT_TIMEOUT_MS });
      const pdf = await pooled.page.pdf({ printBackground: true, preferCSSPageSize: true, format: 'A4' });
      reusable = true;
      return pdf;
    } finally {
      this.#release(pooled, reusable);
    }
  }

  /** Stops the browser (pages included); a later `print` would start a new one. */
  async close(): Promise<void> {
    const browser = this.#browser;
    this.#forget();
    if (browser) await browser.then((b) => b.close(), () => undefined);
  }

  #executable(): string {
    return this.#options.executable ?? chromiumExecutable();
  }

  #startBrowser(): Promise<Browser> {
    if (this.#browser) return this.#browser;
    const executablePath = this.#executable();
    this.launches++;
    const started = import('playwright-core').then(({ chromium }) => chromium.launch({
      executablePath, headless: true, args: [...CHROMIUM_FLAGS], timeout: LAUNCH_TIMEOUT_MS,
      // The platform closes the browser itself (`Platform.close`); Playwright still kills it when the process exits.
      handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false,
    })).then((browser) => {
      browser.on('disconnected', () => {
        // Crashed or killed: forget it and its pages, so the next document starts a new one.
        if (this.#browser === started) this.#forget();
      });
      return browser;
    }, (err: unknown) => {
      if (this.#browser === started) this.#forget();
      const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
      throw new ReportEngineUnavailable(`PDF reports need a headless Chromium, and ${executablePath} did not start (${reason}): check that it runs (${executablePath} --headless --version) or set FF_CHROMIUM to one that does`);
    });
    this.#browser = started;
    return started;
  }

  #forget(): void {
    this.#generation++;
    this.#browser = null;
    this.#idle = [];
    this.#open = 0;
    // Anyone waiting for a page of the lost browser gets one of the next.
    for (const wake of this.#waiting.splice(0)) wake();
  }

  async #acquire(): Promise<PooledPage> {
    for (;;) {
      const idle = this.#idle.pop();
      if (idle && !idle.page.isClosed()) return idle;
      if (idle) {
        this.#open--;
        continue;
      }
      const generation = this.#generation;
      if (this.#open < this.poolSize) {
        this.#open++;
        try {
          return await this.#newPage();
        } catch (err) {
          if (generation === this.#generation) this.#open--;
          this.#wakeOne();
          throw err;
        }
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
  }

  async #newPage(): Promise<PooledPage> {
    const browser = await this.#startBrowser();
    const generation = this.#generation;
    const context = await browser.newContext({ javaScriptEnabled: false, serviceWorkers: 'block', acceptDownloads: false });
    await context.route('**/*', (route) => route.abort('blockedbyclient'));
    return { context, page: await context.newPage(), generation };
  }

  #release(pooled: PooledPage, reusable: boolean): void {
    const current = pooled.generation === this.#generation;
    if (reusable && current) {
      this.#idle.push(pooled);
    } else {
      // A page that failed (timeout, crash) is not trusted with the next document.
      if (current) this.#open--;
      void pooled.context.close().catch(() => undefined);
    }
    this.#wakeOne();
  }

  #wakeOne(): void {
    this.#waiting.shift()?.();
  }
}
