/**
 * Cloning a database: `CREATE DATABASE … TEMPLATE`, after telling the source's file sweep about
 * the clone (the two share stored files from now on). It needs the engine and the file store,
 * nothing of the platform above them, so `fieldforge db clone` loads only those: the clone itself
 * takes 65–130 ms, and loading the whole platform for it cost more than the clone (issue 29).
 */
import { assertValidDatabaseName } from '../db/database-name.js';
import type { Engine } from '../db/engine.js';
import { recordClone } from '../files/file-removal.js';
import type { FileService } from '../files/file-service.js';

export async function cloneOnEngine(engine: Engine, files: FileService, source: string, target: string): Promise<void> {
  assertValidDatabaseName(source);
  assertValidDatabaseName(target);
  // Before copying: from now on the source's file sweep asks the clone before removing shared bytes.
  await recordClone(await engine.open(source), target, files);
  await engine.clone(source, target);
}
