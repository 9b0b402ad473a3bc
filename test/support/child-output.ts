/**
 * Waiting on a child process (`fieldforge serve` and the like) for something to show in its
 * output, failing with that output when it takes too long or the child exits first.
 */
import type { ChildProcess } from 'node:child_process';

export async function waitForChild(
  child: () => ChildProcess | undefined, output: () => string, seen: () => boolean, label: string, ms = 90_000,
): Promise<void> {
  const until = Date.now() + ms;
  while (!seen()) {
    if (Date.now() > until) throw new Error(`${label} not seen within ${ms} ms:\n${output()}`);
    const code = child()?.exitCode;
    if (code !== null && code !== undefined) throw new Error(`serve exited (${code}):\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
